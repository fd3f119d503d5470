#include <stdio.h>
#include <libuniqd.h>

int main(void)
{
    uniqd_pool *pool = uniqd_open("example", 0);  /* created if absent */
    if (!pool)
        return fprintf(stderr, "%s\n", uniqd_last_error()), 1;
    uint32_t type = UNIQD_CLASS(pool, "builtin.integer");  /* once per call site */
    uint64_t a = uniqd_intern_str(pool, type, "i32");  /* asks the kernel */
    uint64_t b = uniqd_intern(pool, type, "i32", 3);   /* the thread's cache */
    printf("i32: %#llx %#llx\n", (unsigned long long)a, (unsigned long long)b);
    uniqd_close(pool);
    return !(a && a == b);
}
