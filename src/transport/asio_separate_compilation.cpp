// Boost.Asio, Asio's SSL support and Beast are compiled once, here
// (BOOST_ASIO_SEPARATE_COMPILATION / BOOST_BEAST_SEPARATE_COMPILATION), so that
// the other translation units include their declarations only.
#include <utility>  // before Asio's awaitable.hpp with Boost 1.74+ and C++20 coroutines

#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
