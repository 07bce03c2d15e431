#!/usr/bin/env bash
# Checks that the documentation points only at what the repository holds, in
# every Markdown file of README.md, CHANGELOG.md, docs/, examples/, bench/ and
# deploy/ (a root other than the repository's may be given, which the suite
# uses to show that each kind of fault is caught):
#   1. every relative link [text](path) and image ![alt](path) names a file
#      or directory that exists;
#   2. a link's #anchor names a heading of its page (GitHub's anchors);
#   3. a path in backticks outside code blocks (`src/...`, `test/e2e/...`,
#      `deploy/...`; a * matches as in the shell) exists;
#   4. no page cites documents that are not in the repository: a page named
#      NAME.md that none of these files is, or the design notes the code was
#      once written against (the project's own words are its docs/ pages);
#   5. every metric the code exposes (a "fedmetrics_..." or "process_..."
#      name in src/, the HPA controller's as its prefix plus a suffix) is on
#      docs/metrics.md;
#   6. the code does not cite such documents either: no line of a file under
#      src/, include/, test/, fuzz/, bench/, scripts/, deploy/, examples/, nor
#      of Dockerfile or CMakeLists.txt (comments, test names, a scenario's
#      "description") names the design notes, a bare NAME.md that is not at
#      the top of the repository, a docs/... or examples/... page that does
#      not exist, or an issue by number ("issue 17": the issue tracker is not
#      in the repository; the reason goes in the comment or on a docs/design/
#      page) (this script and its test name the patterns on purpose).
# Prints each fault as FILE:LINE: what, and exits 1 if there is one.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
exec python3 - "$root" <<'EOF'
import glob, os, re, sys

root = sys.argv[1]
files = [f for f in ("README.md", "CHANGELOG.md") if os.path.isfile(os.path.join(root, f))]
for top in ("docs", "examples", "bench", "deploy"):
    for dirpath, _, names in os.walk(os.path.join(root, top)):
        files += [os.path.relpath(os.path.join(dirpath, n), root) for n in names if n.endswith(".md")]
files.sort()

def slug(heading):
    # GitHub: lower case, punctuation dropped, spaces to hyphens.
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")

def lines_outside_code(path):
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if not fenced:
                yield number, line

anchors_cache = {}
def anchors(path):
    if path not in anchors_cache:
        seen, out = {}, set()
        for _, line in lines_outside_code(path):
            m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
        anchors_cache[path] = out
    return anchors_cache[path]

link = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
code_span = re.compile(r"`([^`\n]+)`")
repo_path = re.compile(r"^(src|include|test|docs|examples|deploy|scripts|bench|fuzz|certs|\.ci)/[\w./*-]*$")
foreign = re.compile(r"shared/specs|wire[- ]contract|reference-lessons", re.IGNORECASE)
md_name = re.compile(r"(?<![\w/.-])([\w-]+\.md)\b")
md_names = {os.path.basename(f) for f in files}

faults = 0
def fault(path, number, what):
    global faults
    faults += 1
    print(f"{path}:{number}: {what}")

for rel in files:
    path = os.path.join(root, rel)
    base = os.path.dirname(path)
    for number, line in lines_outside_code(path):
        for target in link.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto:
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(base, file_part)) if file_part else path
            if not os.path.exists(dest):
                fault(rel, number, f"link to {target}: no such file")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                fault(rel, number, f"link to {target}: no heading #{anchor} in {os.path.relpath(dest, root)}")
        for span in code_span.findall(line):
            span = span.rstrip(".,:;")
            if not repo_path.match(span) or "..." in span:
                continue
            if not glob.glob(os.path.join(root, span)):
                fault(rel, number, f"`{span}`: no such file in the repository")
        m = foreign.search(line)
        if m:
            fault(rel, number, f"cites \"{m.group(0)}\", which is not in the repository")
        for name in md_name.findall(link.sub("", line)):
            if name not in md_names:
                fault(rel, number, f"cites {name}, which is not in the repository")

metric_literal = re.compile(r'"((?:fedmetrics|process)_[a-z_]+)"')
subsystem = re.compile(r'kSubsystem \+ "([a-z_]+)"')
metrics_page = os.path.join(root, "docs", "metrics.md")
documented = open(metrics_page, encoding="utf-8").read() if os.path.isfile(metrics_page) else ""
for source in sorted(glob.glob(os.path.join(root, "src", "**", "*.[ch]pp"), recursive=True)):
    text = open(source, encoding="utf-8").read()
    line_of = lambda m: text.count("\n", 0, m.start()) + 1
    names = {m.group(1): line_of(m) for m in metric_literal.finditer(text)}
    prefix = re.search(r'kSubsystem = "([a-z_]+)"', text)
    if prefix:
        names.update({prefix.group(1) + m.group(1): line_of(m) for m in subsystem.finditer(text)})
    for name, number in sorted(names.items()):
        # The page writes a family's later members as "..._suffix".
        short = "..._" + name.split("_controller_", 1)[1] if "_controller_" in name else None
        if name not in documented and not (short and short in documented):
            fault(os.path.relpath(source, root), number, f"metric {name} is not on docs/metrics.md")

code_dirs = ("src", "include", "test", "fuzz", "bench", "scripts", "deploy", "examples")
code_files = [f for f in ("Dockerfile", "CMakeLists.txt") if os.path.isfile(os.path.join(root, f))]
for top in code_dirs:
    for dirpath, _, names in os.walk(os.path.join(root, top)):
        code_files += [os.path.relpath(os.path.join(dirpath, n), root) for n in names if not n.endswith(".md")]
names_patterns = {"scripts/check-doc-links.sh", "test/lint/doc_links_test.sh"}
top_md = {n for n in os.listdir(root) if n.endswith(".md")}
page_path = re.compile(r"(?<![\w/.$-])((?:docs|examples|deploy|bench)/[\w./-]*\.md)\b")
url = re.compile(r"\w+://\S+")
issue = re.compile(r"\bissues? #?\d+\b", re.IGNORECASE)
for rel in sorted(set(code_files) - names_patterns):
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
    except (UnicodeDecodeError, OSError):
        continue  # binary fuzz inputs, images
    for number, line in enumerate(text.splitlines(), 1):
        m = foreign.search(line)
        if m:
            fault(rel, number, f"cites \"{m.group(0)}\", which is not in the repository")
        plain = url.sub("", link.sub("", line))
        for name in md_name.findall(plain):
            if name not in top_md:
                page = f" (a page under docs/ is docs/{name})" if os.path.isfile(os.path.join(root, "docs", name)) else ""
                fault(rel, number, f"cites {name}, which is not in the repository{page}")
        for page in page_path.findall(plain):
            if not os.path.isfile(os.path.join(root, page)):
                fault(rel, number, f"cites {page}, which is not in the repository")
        m = issue.search(plain)
        if m:
            fault(rel, number, f"cites \"{m.group(0)}\": the issue tracker is not in the repository")

sys.exit(1 if faults else 0)
EOF
