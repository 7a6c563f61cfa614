dnl The options scripts/swoole.sh passes to Swoole's configure, and what
dnl each turns on in `php --ri swoole`.
PHP_ARG_ENABLE([swoole], [whether to build the stand-in swoole extension],
  [AS_HELP_STRING([--enable-swoole], [Build it])], [yes])
PHP_ARG_ENABLE([swoole-pgsql], [whether to report coroutine_pgsql],
  [AS_HELP_STRING([--enable-swoole-pgsql], [Report coroutine_pgsql])], [no], [no])
PHP_ARG_ENABLE([iouring], [whether to link liburing],
  [AS_HELP_STRING([--enable-iouring], [Link liburing 2.8 or newer])], [no], [no])
PHP_ARG_ENABLE([uring_socket], [whether to report uring_socket],
  [AS_HELP_STRING([--enable-uring-socket], [Report uring_socket])], [no], [no])

if test "$PHP_SWOOLE" != "no"; then
    if test "$PHP_SWOOLE_PGSQL" != "no"; then
        AC_DEFINE(FAKE_PGSQL, 1, [report coroutine_pgsql])
    fi
    if test "$PHP_IOURING" != "no"; then
        PKG_CHECK_MODULES([URING], [liburing >= 2.8])
        PHP_EVAL_LIBLINE($URING_LIBS, SWOOLE_SHARED_LIBADD)
        PHP_EVAL_INCLINE($URING_CFLAGS)
        AC_DEFINE(FAKE_URING, 1, [link liburing])
    fi
    if test "$PHP_URING_SOCKET" != "no"; then
        AC_DEFINE(FAKE_URING_SOCKET, 1, [report uring_socket])
    fi
    PHP_SUBST(SWOOLE_SHARED_LIBADD)
    PHP_NEW_EXTENSION(swoole, swoole.c, $ext_shared)
fi
