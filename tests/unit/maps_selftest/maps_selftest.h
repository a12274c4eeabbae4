/* maps_selftest.h: layouts shared by maps.bpf.c and maps_selftest.c (plan.h's map
 * layout: 8-byte integers, NUL-padded strings, a u64 bucket index last for histograms,
 * a u64 0 key for maps without keys). */
#ifndef MAPS_SELFTEST_H
#define MAPS_SELFTEST_H

#include <linux/types.h>

#define MT_SLEN 16 /* string key fields */
#define MT_VSTR 32 /* string values */
#define MT_MAPFULL_ENTRIES 128
#define MT_FULL_ID 0        /* plan index of @full in the check plan */
#define MT_FULL_ENTRIES 4   /* max_entries of @full */

struct k0 { __u64 zero; };                              /* no keys */
struct hk0 { __u64 zero; __u64 bucket; };
struct k1 { __s64 k; };                                 /* [int] */
struct hk1 { __s64 k; __u64 bucket; };
struct ks { char s[MT_SLEN]; };                         /* [str] */
struct hks { char s[MT_SLEN]; __u64 bucket; };
struct ksi { char s[MT_SLEN]; __s64 n; };               /* [str, int] */
struct kis { __s64 n; char s[MT_SLEN]; };               /* [int, str] */
struct hkis { __s64 n; char s[MT_SLEN]; __u64 bucket; };
struct ksite { __u64 func; __u64 probe; };              /* [func, probe] */

struct v_avg { __s64 count, total; };                   /* AVG, STATS */
struct v_mm { __s64 value; __u64 set; };                /* MIN, MAX */
struct v_str { char s[MT_VSTR]; };                      /* STR */

#endif
