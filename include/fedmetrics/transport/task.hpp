#pragma once
// The type a port between modules returns: a coroutine (an Asio awaitable)
// that the caller co_awaits on its own strand. Light on purpose: only
// Asio's awaitable.hpp, so a port's header costs a module that merely names
// the port less than nlohmann/json does; the code that runs coroutines
// includes transport/async.hpp for the rest of the toolkit.
#include <utility>  // before Asio's awaitable.hpp with GCC 12 coroutines

#include <boost/asio/awaitable.hpp>

namespace fedmetrics::async {

template <class T = void>
using Task = boost::asio::awaitable<T>;

}  // namespace fedmetrics::async
