/* rs_scenario_doc.c — a scenario in words: the one-line summary, the resolved dump (YAML with units), and the key reference generated from the key tables. */
#define _POSIX_C_SOURCE 200809L
#include "rs_scenario.h"

#include <string.h>

#include "model/rs_topo.h"
#include "rs_scenario_keys.h"
#include "rs_units.h"

int rs_scenario_summary(const rs_scenario *sc, char *buf, size_t len)
{
    char colls[96] = "", b[32], e[32];
    size_t used = 0;
    for (int i = 0; i < sc->workload.colls_count && used < sizeof colls; i++)
        used += (size_t)snprintf(colls + used, sizeof colls - used, "%s%s", i ? "+" : "",
                                 rs_yaml_enum_name(&rs_scenario_colls, sc->workload.colls[i]));
    rs_units_format((double)sc->workload.begin_bytes, RS_UNIT_SIZE, b, sizeof b);
    rs_units_format((double)sc->workload.end_bytes, RS_UNIT_SIZE, e, sizeof e);
    uint32_t nsizes = rs_scenario_size_count(&sc->workload);
    char faults[32] = "";
    if (sc->faults_count)
        snprintf(faults, sizeof faults, ", %zu fault%s", sc->faults_count, sc->faults_count == 1 ? "" : "s");
    char sweep[160];
    const rs_training *t = &sc->workload.training;
    if (t->model) {
        uint64_t params = 0;
        for (size_t i = 0; i < t->tensors_count; i++)
            params += t->tensors[i].params;
        snprintf(colls, sizeof colls, "training");
        char how[96];
        if (t->dp) /* parallel given (the check set dp) */
            snprintf(how, sizeof how, "tp %d x pp %d x dp %d%s, %d micro-batches", t->tp, t->pp, t->dp,
                     t->ep > 1 ? " (experts over ep replicas)" : "", t->micro_batches);
        else
            snprintf(how, sizeof how, "fusion %s", t->fusion ? t->fusion : "default");
        snprintf(sweep, sizeof sweep, "%s (%zu tensors, %.2f M parameters), micro-batch %d, %s",
                 t->model_name ? t->model_name : "?", t->tensors_count, (double)params / 1e6, t->micro_batch, how);
    } else if (nsizes == 1)
        snprintf(sweep, sizeof sweep, "%s (1 size)", b);
    else if (sc->workload.step_bytes) {
        char st[32];
        rs_units_format((double)sc->workload.step_bytes, RS_UNIT_SIZE, st, sizeof st);
        snprintf(sweep, sizeof sweep, "%s..%s +%s (%u sizes)", b, e, st, nsizes);
    } else
        snprintf(sweep, sizeof sweep, "%s..%s x%u (%u sizes)", b, e, sc->workload.factor, nsizes);
    return snprintf(buf, len, "%s, %d ranks, %llu links, %s %s %s, %s, payload %s, %s fidelity%s",
                    rs_scenario_kind_name(sc->topo.kind), sc->topo.nranks,
                    (unsigned long long)rs_topo_link_count(&sc->topo), colls,
                    rs_yaml_enum_name(&rs_scenario_dtypes, sc->workload.dtype),
                    rs_yaml_enum_name(&rs_scenario_ops, sc->workload.op), sweep,
                    rs_yaml_enum_name(&rs_scenario_payloads, sc->payload_real),
                    rs_yaml_enum_name(&rs_scenario_fidelities, sc->fidelity), faults);
}

/* Which keys the dump writes: what the scenario's kind uses and what it gives. */
static int rs_key_shown(const void *root, const rs_map *m, const rs_key *k, const void *base)
{
    const rs_scenario *sc = root;
    if (k->kinds && !(k->kinds & RS_K(sc->topo.kind)))
        return 0;
    if (!rs_schema_is_set(k, base))
        return 0;
    /* crc always holds a value (its default), but only a corrupt fault may say it */
    if (m == &rs_scenario_map_fault && strcmp(k->name, "crc") == 0)
        return ((const rs_fault *)base)->kind == RS_FAULT_CORRUPT;
    if (m == &rs_scenario_map_workload) {
        const rs_workload *w = base;
        if (k->sub == &rs_scenario_map_training)
            return w->training.model != NULL;
        /* a training step has no sweep (rs_scenario_check_workload refuses these keys with one) */
        if (w->training.model &&
            (k->type == RS_T_COLLS || k->sub == &rs_scenario_map_sizes || strcmp(k->name, "root") == 0))
            return 0;
    }
    /* a parallel step (the check sets dp) has fusion only where given; a data-parallel one no
     * parallel keys */
    if (m == &rs_scenario_map_training) {
        const int parallel = ((const rs_training *)base)->dp != 0;
        if (strcmp(k->name, "fusion") == 0)
            return !parallel || ((const rs_training *)base)->fusion != NULL;
        if (strcmp(k->name, "parallel") == 0 || strcmp(k->name, "micro_batches") == 0)
            return parallel;
    }
    /* a mapping of keys none of which is given (workload.latency_paths) says nothing */
    if (k->type == RS_T_MAP) {
        int any = 0;
        for (size_t i = 0; i < k->sub->nkeys && !any; i++)
            any = rs_schema_is_set(&k->sub->keys[i], (const char *)base + k->offset);
        if (!any)
            return 0;
    }
    /* a linear sweep has no factor (rs_scenario_check_sizes refuses both) */
    if (m == &rs_scenario_map_sizes && strcmp(k->name, "factor") == 0)
        return ((const rs_workload *)base)->step_bytes == 0;
    return 1;
}

int rs_scenario_dump(const rs_scenario *sc, FILE *out)
{
    char summary[256];
    rs_scenario_summary(sc, summary, sizeof summary);
    fputs("# resolved scenario: every default filled in, units normalised\n# ", out);
    for (const char *p = summary; *p; p++)
        fputc((unsigned char)*p < 0x20 ? '?' : *p, out);
    fputc('\n', out);
    rs_schema_write_block(out, rs_scenario_schema.top, sc, 0, rs_key_shown, sc);
    fflush(out);
    return ferror(out) ? -1 : 0;
}

/* ---- the key reference ------------------------------------------------------------------------ */

void rs_scenario_print_keys(FILE *out)
{
    for (size_t mi = 0; rs_scenario_maps[mi] != NULL; mi++) {
        const rs_map *m = rs_scenario_maps[mi];
        fprintf(out, "### %s%s%s\n\n%s\n\n", m->path[0] ? "`" : "", m->path[0] ? m->path : "top level",
                m->path[0] ? "`" : "", m->title);
        fprintf(out, "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n");
        for (size_t i = 0; i < m->nkeys; i++) {
            const rs_key *k = &m->keys[i];
            char def[160], allowed[512], kinds[128];
            if (k->flags & RS_F_REQUIRED)
                snprintf(def, sizeof def, "**required**");
            else if (k->req_kinds) {
                rs_schema_variant_list(&rs_scenario_schema, k->req_kinds, kinds, sizeof kinds);
                snprintf(def, sizeof def, "**required** for %s%s%s", kinds, k->def_doc ? "; " : "",
                         k->def_doc ? k->def_doc : "");
            } else if (k->def && k->def[0])
                snprintf(def, sizeof def, "`%s`", k->def);
            else if (k->def)
                snprintf(def, sizeof def, "`\"\"`");
            else
                snprintf(def, sizeof def, "%s", k->def_doc ? k->def_doc : "-");
            if (k->type == RS_T_MAP || k->type == RS_T_SEQ)
                snprintf(allowed, sizeof allowed, "see `%s`", k->sub->path);
            else
                rs_schema_allowed(k, allowed, sizeof allowed);
            fprintf(out, "| `%s` | %s | %s | %s | %s", k->name, rs_schema_type_name(k), def, allowed, k->desc);
            if (k->kinds) {
                rs_schema_variant_list(&rs_scenario_schema, k->kinds, kinds, sizeof kinds);
                fprintf(out, " (kind %s only)", kinds);
            }
            fprintf(out, " |\n");
        }
        fprintf(out, "\n");
    }
    fprintf(out, "### Kinds\n\n| kind | ranks | rank-to-rank links |\n|---|---|---|\n");
    static const char *const ranks_doc[RS_TOPO_KIND_COUNT] = {
        [RS_TOPO_RING] = "`ranks`, at least 2",
        [RS_TOPO_BIRING] = "`ranks`, at least 2",
        [RS_TOPO_FULL_MESH] = "`ranks`, at least 2",
        [RS_TOPO_TORUS2D] = "dims[0] x dims[1]",
        [RS_TOPO_SWITCH] = "`ranks`, each with a link pair to one switch",
        [RS_TOPO_FAT_TREE] = "`ranks` = leaves x `per_leaf`; each leaf has a link pair to every spine",
        [RS_TOPO_SERVER8] = "8",
        [RS_TOPO_CLUSTER] = "8 x `servers`; every NPU also has a NIC link pair to one switch",
        [RS_TOPO_LINKS] = "`ranks`, or the largest endpoint + 1",
    };
    for (int k = 0; k < RS_TOPO_KIND_COUNT; k++)
        fprintf(out, "| `%s` | %s | %s |\n", rs_scenario_kind_name((rs_topo_kind)k), ranks_doc[k],
                rs_scenario_kind_links[k]);
}

const char *rs_scenario_key_default(const char *path)
{
    const rs_map *m = rs_scenario_schema.top;
    for (const char *p = path; m != NULL;) {
        size_t n = strcspn(p, ".");
        const rs_key *k = NULL;
        for (size_t i = 0; i < m->nkeys && k == NULL; i++)
            if (strlen(m->keys[i].name) == n && strncmp(m->keys[i].name, p, n) == 0)
                k = &m->keys[i];
        if (k == NULL)
            return NULL;
        if (p[n] == '.') { /* a key of the mapping k describes */
            m = k->type == RS_T_MAP ? k->sub : NULL;
            p += n + 1;
            continue;
        }
        if (k->def)
            return k->def;
        if ((k->flags & RS_F_REQUIRED) || k->req_kinds)
            return "required";
        return k->def_doc ? k->def_doc : "-";
    }
    return NULL;
}
