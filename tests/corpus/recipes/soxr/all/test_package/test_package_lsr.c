#include <soxr-lsr.h>
#include <stdio.h>

int main() {
    printf("soxr-lsr version: %s\n", src_get_version());
    return 0;
}
