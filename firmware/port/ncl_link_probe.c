/* ncl_link_probe.c — a call into the C library, which a board does not have: the ncl_link_probe
 * image must fail to link (the link check's own test, tests/firmware/port/port_build.sh). */
int puts(const char *s);
void ncl_link_probe(void);

void ncl_link_probe(void)
{
    puts("a board has no C library");
}
