/* ncl_link_check.c — the entry of the link-check image (see CMakeLists.txt): the image holds every
 * object of the engine and the mmio backend whole, so it only needs a symbol to start from. */
void ncl_link_check_entry(void);

void ncl_link_check_entry(void)
{
    for (;;) {
    }
}
