/* rs_units.h — numbers with units in scenario values ("30 GB/s", "1.5 us", "4 KiB"), to and from SI. */
#ifndef RS_UNITS_H
#define RS_UNITS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a value measures. COUNT values are plain numbers with no unit. */
typedef enum rs_unit_kind {
    RS_UNIT_COUNT = 0,
    RS_UNIT_BANDWIDTH, /**< bytes per second */
    RS_UNIT_TIME,      /**< seconds */
    RS_UNIT_SIZE,      /**< bytes */
    RS_UNIT_KIND_COUNT
} rs_unit_kind;

typedef enum rs_units_status {
    RS_UNITS_OK = 0,
    RS_UNITS_NOT_NUMBER, /**< no number where the value starts ("fast", "", "nan s") */
    RS_UNITS_MISSING,    /**< a number without the unit its kind needs ("30") */
    RS_UNITS_UNKNOWN,    /**< a unit nobody knows, or an ambiguous one ("KB", "Gbps") */
    RS_UNITS_WRONG_KIND, /**< a unit of another kind ("30 GB" for a bandwidth), or any unit on a count */
    RS_UNITS_RANGE       /**< too large or too small for a double ("1e999 GB/s") */
} rs_units_status;

/**
 * Parses `text` as `<number> [spaces] <unit>` of the given kind and returns the value in SI
 * units (bytes/s, s, bytes) in *si. The number is decimal with an optional fraction and
 * exponent (1, 1.5, .5, 2e3, -1). Decimal prefixes are exact: "1.5 us" is the double nearest
 * 1.5e-6, as strtod would give. On failure `why` (if not NULL) gets one phrase saying what is
 * wrong, e.g. "'30 GB' is a size, not a bandwidth" or "unit 'KB' is ambiguous: write kB (1000)
 * or KiB (1024)"; rs_units_allowed() gives the list to show next to it.
 */
rs_units_status rs_units_parse(const char *text, rs_unit_kind kind, double *si, char *why, size_t whylen);

/** The units a kind accepts, for "(allowed: ...)" messages. */
const char *rs_units_allowed(rs_unit_kind kind);

/** "bandwidth", "time", "size" or "count". */
const char *rs_units_kind_name(rs_unit_kind kind);

/**
 * Writes `si` with a readable unit ("30 GB/s", "1.5 us", "64 MiB", "12.5 GB/s"). The text
 * parses back (rs_units_parse) to exactly the same double. Sizes must be whole bytes; they are
 * written in the largest binary or decimal unit that divides them exactly. Returns the length
 * snprintf would return (negative on a kind it does not know).
 */
int rs_units_format(double si, rs_unit_kind kind, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
