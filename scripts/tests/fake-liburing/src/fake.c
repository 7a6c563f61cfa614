#include "liburing.h"

int fake_liburing_linked(void)
{
    return 1;
}
