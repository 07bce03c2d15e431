"""A minimal HTTP CONNECT proxy for the end-to-end tests, on 127.0.0.1.

Usage: connect_proxy.py LOG_FILE [deny]
Prints "proxy listening on PORT"; appends each request line to LOG_FILE.
With "deny" every request is answered 407 Proxy Authentication Required.
"""
import asyncio
import sys

log = open(sys.argv[1], "a", buffering=1)
deny = len(sys.argv) > 2 and sys.argv[2] == "deny"


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def handle(reader, writer):
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        writer.close()
        return
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    log.write(line + "\n")
    method, target = (line.split(" ") + ["", ""])[:2]
    if deny or method != "CONNECT":
        writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()
        return
    host, port = target.rsplit(":", 1)
    try:
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
    except OSError:
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()
        return
    writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    await writer.drain()
    await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print("proxy listening on", server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
