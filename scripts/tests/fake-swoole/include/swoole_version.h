/* The marker scripts/swoole.sh looks for in a Swoole source archive. */
#define SWOOLE_VERSION "0.0.1-test"
