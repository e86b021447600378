/* fuzz_units.c — libFuzzer target for values with units: a verdict with a reason for any text, and every value parsed formats to text that parses back to it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "scenario/rs_units.h"

/* rs_units_format's promise: its text parses back (rs_units_parse) to exactly the same double. */
static void check_round_trip(double v, rs_unit_kind kind)
{
    char text[128], why[200] = "";
    double back = NAN;
    int n = rs_units_format(v, kind, text, sizeof text);
    FUZZ_CHECK(n > 0 && (size_t)n < sizeof text);
    FUZZ_CHECK_MSG(rs_units_parse(text, kind, &back, why, sizeof why) == RS_UNITS_OK, text);
    FUZZ_CHECK_MSG(back == v, text);
}

/* The first byte picks the kind (its value mod the kind count: '0'..'3' in a text seed are count,
 * bandwidth, time, size); the rest is the text, NUL-terminated as scenario values are. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    rs_unit_kind kind = (rs_unit_kind)(data[0] % RS_UNIT_KIND_COUNT);
    char *text = malloc(size);
    FUZZ_CHECK(text != NULL);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char why[200] = "";
    double v = NAN;
    rs_units_status st = rs_units_parse(text, kind, &v, why, sizeof why);
    free(text);
    FUZZ_CHECK((unsigned)st <= RS_UNITS_RANGE);
    if (st != RS_UNITS_OK) {
        /* the phrase quotes the text as given, control characters too: rs_yaml_fail makes the
         * loader's message one line, not this */
        FUZZ_CHECK(why[0] != '\0');
        return 0;
    }
    FUZZ_CHECK(isfinite(v));
    check_round_trip(v, kind);
    return 0;
}
