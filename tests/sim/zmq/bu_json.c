/* bu_json.c — reads `ringsim bringup --json` output and prints one line per link, for bringup.sh to check. */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

/* Prints "links N", then "SRC->DST VERDICT" per link, "rings N ok K", "ok true|false"; exit 1 if
 * the file is not the JSON `ringsim bringup` writes. */
int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bu_json FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    static char buf[1 << 22];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    cJSON *j = cJSON_ParseWithLength(buf, n);
    const cJSON *links = cJSON_GetObjectItemCaseSensitive(j, "links");
    const cJSON *rings = cJSON_GetObjectItemCaseSensitive(j, "rings");
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(j, "ok");
    if (!cJSON_IsArray(links) || !cJSON_IsArray(rings) || !cJSON_IsBool(ok)) {
        fprintf(stderr, "%s: not a bring-up report (links, rings, ok)\n", argv[1]);
        cJSON_Delete(j);
        return 1;
    }
    printf("links %d\n", cJSON_GetArraySize(links));
    for (const cJSON *l = links->child; l; l = l->next) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(l, "src"), *d = cJSON_GetObjectItemCaseSensitive(l, "dst");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(l, "verdict");
        if (!cJSON_IsNumber(s) || !cJSON_IsNumber(d) || !cJSON_IsString(v)) {
            fprintf(stderr, "%s: a link without src, dst, verdict\n", argv[1]);
            cJSON_Delete(j);
            return 1;
        }
        printf("%d->%d %s\n", s->valueint, d->valueint, v->valuestring);
    }
    int nok = 0;
    for (const cJSON *r = rings->child; r; r = r->next)
        nok += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "ok"));
    printf("rings %d ok %d\n", cJSON_GetArraySize(rings), nok);
    printf("ok %s\n", cJSON_IsTrue(ok) ? "true" : "false");
    cJSON_Delete(j);
    return 0;
}
