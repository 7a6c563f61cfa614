/* The stand-in swoole extension: only its `php --ri swoole` rows. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php.h"
#include "ext/standard/info.h"
#include "include/swoole_version.h"
#ifdef FAKE_URING
#include <liburing.h>
#endif

static PHP_MINFO_FUNCTION(swoole)
{
    php_info_print_table_start();
    php_info_print_table_row(2, "Version", SWOOLE_VERSION);
    php_info_print_table_row(2, "openssl", "enabled");
    php_info_print_table_row(2, "http2", "enabled");
#ifdef FAKE_PGSQL
    php_info_print_table_row(2, "coroutine_pgsql", "enabled");
#endif
#ifdef FAKE_URING
    /* Calls into the liburing it was linked with. */
    php_info_print_table_row(2, "io_uring", fake_liburing_linked() ? "enabled" : "broken");
#endif
#ifdef FAKE_URING_SOCKET
    php_info_print_table_row(2, "uring_socket", "enabled");
#endif
    php_info_print_table_end();
}

zend_module_entry swoole_module_entry = {
    STANDARD_MODULE_HEADER,
    "swoole",
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    PHP_MINFO(swoole),
    SWOOLE_VERSION,
    STANDARD_MODULE_PROPERTIES,
};

#ifdef COMPILE_DL_SWOOLE
ZEND_GET_MODULE(swoole)
#endif
