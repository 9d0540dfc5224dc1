/*
 * clusters.c --
 *
 *	The procs' call graph and its clusters: `profiler report -format
 *	clusters`, `profiler export -format dot`, and the views proc_frames,
 *	proc_nodes, proc_edges and clusters of a saved profile.
 *
 *	The graph's nodes are the procs (procs, methods, lambdas; tclprof's
 *	own left out). An edge joins a proc to a proc it called with no
 *	other proc between them on the stack; its weight is the exact number
 *	of calls in trace mode (the trace's caller->callee counts, through
 *	commands that are not procs when that is unambiguous, see
 *	GraphBuild), the number of samples in which the edge occurs (once
 *	per sample) in the other modes. Edges lighter than the minimum weight are
 *	dropped, then the graph is flooded breadth first from its roots: a
 *	cluster is what a root reaches. Undirected, an edge is followed both
 *	ways (the clusters are the connected components: a shared utility
 *	joins its callers); directed, only from caller to callee, in root
 *	order, and a proc reached from several roots belongs to the first
 *	(a shared utility goes with the first subsystem that calls it, the
 *	others stay apart).
 *
 *	Root order: procs with no caller (over the kept edges) first, then by
 *	samples, most first, then by name. Flooding in that order gives each
 *	proc to the first proc in the order that reaches it (whoever reaches
 *	a proc claimed earlier reaches what that proc's root reached). That
 *	makes the clustering one SQLite query for the saved file (the reach
 *	of every proc no earlier proc reaches one hop before it, and each
 *	proc's first such root: the clusters view), which the tests check
 *	against the report's own flood (GraphCluster says why the report
 *	does not run the query).
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <stdlib.h>
#include <string.h>

/*
 * Node and edge indices stored as hash values.
 */

#define IDX(h)		((int) (intptr_t) Tcl_GetHashValue(h))
#define SETIDX(h, i)	Tcl_SetHashValue((h), (ClientData) (intptr_t) (i))

/*
 * The types of Tcl frames that are nodes, as the saved file spells them.
 */

#define PROC_TYPES "('proc', 'method', 'lambda')"

/*
 * The clustering query over proc_nodes (name, samples, self_samples) and
 * proc_edges (caller, callee, weight). MIN is the minimum weight, DIRS a
 * query giving the values of `directed` wanted (0, 1 or both). One row
 * per (directed, proc): its cluster's root, size and samples (the
 * members' self samples). `ranked` is the root order; `hop` the edges
 * the flood follows; a seed is a proc with no lower-ranked proc one hop
 * before it (only those can be first to reach anything).
 */

#define CLUSTER_QUERY(MIN, DIRS) \
"WITH RECURSIVE\n" \
"    params(min_weight) AS (SELECT " MIN "),\n" \
"    dirs(directed) AS (" DIRS "),\n" \
"    kept(caller, callee) AS (SELECT caller, callee FROM proc_edges, params\n" \
"        WHERE weight >= min_weight AND caller <> callee),\n" \
"    hop(directed, a, b) AS (SELECT directed, caller, callee FROM kept, dirs\n" \
"        UNION SELECT directed, callee, caller FROM kept, dirs\n" \
"            WHERE directed = 0),\n" \
"    ranked(name, r) AS (SELECT name, row_number() OVER (ORDER BY\n" \
"        name IN (SELECT callee FROM kept), samples DESC, name)\n" \
"        FROM proc_nodes),\n" \
"    seeds(directed, r, name) AS (SELECT d.directed, x.r, x.name\n" \
"        FROM ranked x, dirs d WHERE NOT EXISTS (SELECT 1 FROM hop h\n" \
"            JOIN ranked y ON y.name = h.a WHERE h.directed = d.directed\n" \
"            AND h.b = x.name AND y.r < x.r)),\n" \
"    reach(directed, r, name) AS (SELECT directed, r, name FROM seeds\n" \
"        UNION SELECT reach.directed, reach.r, hop.b FROM reach JOIN hop\n" \
"            ON hop.directed = reach.directed AND hop.a = reach.name),\n" \
"    owner(directed, name, r) AS (SELECT directed, name, min(r) FROM reach\n" \
"        GROUP BY directed, name)\n" \
"SELECT o.directed, rt.name AS root, count(*) OVER w AS members,\n" \
"    sum(n.self_samples) OVER w AS cluster_samples, n.name, n.samples,\n" \
"    n.self_samples\n" \
"FROM owner o JOIN ranked rt ON rt.r = o.r JOIN proc_nodes n\n" \
"    ON n.name = o.name\n" \
"WINDOW w AS (PARTITION BY o.directed, o.r)\n" \
"ORDER BY o.directed, cluster_samples DESC, members DESC, root,\n" \
"    n.name <> root, n.samples DESC, n.name"

/*
 * The views of a saved profile (executed by save.c after its schema).
 * proc_frames: the proc frames of each stack, root first. proc_nodes:
 * every proc sampled or (trace mode) called, with the samples it is on
 * the stack of, the samples it is the innermost proc of, and its exact
 * calls. proc_edges: the graph's edges and weights. clusters: both
 * clusterings (directed 0 and 1) with every edge kept.
 */

const char TpClustersViewSql[] =
"CREATE VIEW proc_frames AS\n"
"    SELECT sf.stack_id, sf.depth, f.name\n"
"    FROM stack_frames sf JOIN frames f ON f.id = sf.frame_id\n"
"    WHERE f.kind = 'tcl' AND f.type IN " PROC_TYPES "\n"
"        AND f.name NOT GLOB '::tclprof::*'\n"
"        AND coalesce(f.file, '') NOT GLOB '*/tclprof'\n"
"        AND coalesce(f.file, '') <> 'tclprof';\n"
"CREATE VIEW proc_nodes AS\n"
"    WITH tot(name, samples) AS (SELECT d.name, sum(s.count)\n"
"            FROM (SELECT DISTINCT stack_id, name FROM proc_frames) d\n"
"            JOIN stacks s ON s.id = d.stack_id GROUP BY d.name),\n"
"        leaf(stack_id, name, rn) AS (SELECT stack_id, name,\n"
"            row_number() OVER (PARTITION BY stack_id ORDER BY depth DESC)\n"
"            FROM proc_frames),\n"
"        slf(name, samples) AS (SELECT l.name, sum(s.count) FROM leaf l\n"
"            JOIN stacks s ON s.id = l.stack_id WHERE l.rn = 1\n"
"            GROUP BY l.name),\n"
"        names(name) AS (SELECT name FROM tot UNION SELECT callee\n"
"            FROM calls WHERE type IN " PROC_TYPES "\n"
"                AND callee NOT GLOB '::tclprof::*')\n"
"    SELECT n.name, coalesce(t.samples, 0) AS samples,\n"
"        coalesce(x.samples, 0) AS self_samples,\n"
"        (SELECT sum(count) FROM calls c WHERE c.callee = n.name) AS calls\n"
"    FROM names n LEFT JOIN tot t ON t.name = n.name\n"
"        LEFT JOIN slf x ON x.name = n.name;\n"
"CREATE VIEW proc_edges AS\n"
"    WITH pairs(stack_id, caller, callee) AS (SELECT DISTINCT stack_id,\n"
"            caller, callee FROM (SELECT stack_id, lag(name) OVER\n"
"                (PARTITION BY stack_id ORDER BY depth) AS caller,\n"
"                name AS callee FROM proc_frames)\n"
"            WHERE caller IS NOT NULL),\n"
"        procs(name) AS (SELECT callee FROM calls\n"
"            WHERE type IN " PROC_TYPES " AND callee NOT GLOB '::tclprof::*'),\n"
"        own(name) AS (SELECT callee FROM calls\n"
"            WHERE type IN " PROC_TYPES " AND callee GLOB '::tclprof::*'),\n"
"        single(cmd, caller) AS (SELECT callee, min(caller) FROM edges\n"
"            GROUP BY callee HAVING count(DISTINCT caller) = 1),\n"
"        up(cmd, anc, n) AS (SELECT DISTINCT caller, caller, 0 FROM edges\n"
"            WHERE caller NOT IN procs AND caller NOT IN own\n"
"            UNION SELECT up.cmd, s.caller, up.n + 1 FROM up JOIN single s\n"
"                ON s.cmd = up.anc WHERE up.anc NOT IN procs\n"
"                AND up.anc NOT IN own AND up.n < 32),\n"
"        via(cmd, proc) AS (SELECT cmd, anc FROM up WHERE anc IN procs),\n"
"        trace(yes) AS (SELECT coalesce((SELECT value FROM meta\n"
"            WHERE key = 'mode'), '') = 'trace')\n"
"    SELECT p.caller, p.callee, sum(s.count) AS weight\n"
"    FROM pairs p JOIN stacks s ON s.id = p.stack_id, trace\n"
"    WHERE NOT trace.yes GROUP BY p.caller, p.callee\n"
"    UNION ALL\n"
"    SELECT coalesce(v.proc, e.caller), e.callee, sum(e.count)\n"
"    FROM edges e LEFT JOIN via v ON v.cmd = e.caller, trace\n"
"    WHERE trace.yes AND e.callee IN procs\n"
"        AND (e.caller IN procs OR v.proc IS NOT NULL)\n"
"    GROUP BY 1, 2;\n"
"CREATE VIEW clusters AS\n"
CLUSTER_QUERY("1", "VALUES (0), (1)") ";\n";

/*
 * The graph, built from the profile for one report or export.
 */

typedef struct ClNode {
    const char *name;		/* Borrowed from the tree or the profile. */
    const TpFunc *f;		/* The function, if sampled; else NULL. */
    uint64_t total;		/* Samples with the proc on the stack. */
    uint64_t self;		/* Samples whose innermost proc it is. */
    Tcl_WideInt calls;		/* Exact calls (trace mode), else -1. */
    uint32_t stamp;		/* Last stack counted in total, + 1. */
    int cluster;		/* Index in the graph's clusters. */
} ClNode;

typedef struct ClEdge {
    int from, to;		/* Node indices. */
    uint64_t weight;
    uint32_t stamp;		/* Last stack counted, + 1. */
} ClEdge;

typedef struct ClCluster {
    int root;			/* Node index. */
    const char *rootName;	/* Its name. */
    int *members;		/* Node indices, root first. */
    int size;
    uint64_t samples;		/* Sum of the members' self samples. */
    uint64_t internal;		/* Weight of the edges inside (any weight). */
    uint64_t external;		/* ... with one end inside. */
} ClCluster;

typedef struct ClGraph {
    ClNode *nodes;
    int nNodes, capNodes;
    ClEdge *edges;
    int nEdges, capEdges;
    Tcl_HashTable byName;	/* Name -> node index. */
    Tcl_HashTable byPair;	/* {from, to} -> edge index. */
    int exact;			/* Weights are exact calls (trace mode). */
    uint64_t samples;		/* Samples of the view. */
    ClCluster *clusters;
    int nClusters;
    int kept;			/* Edges at or above the minimum weight. */
} ClGraph;

static void *
ClAlloc(
    void *old,
    size_t size)
{
    void *m = realloc(old, size ? size : 1);

    if (m == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    return m;
}

static int
IsProcType(
    int type)
{
    return type == TP_TCL_PROC || type == TP_TCL_METHOD
	    || type == TP_TCL_LAMBDA;
}

static int
IsOwnName(
    const char *name)
{
    return strncmp(name, "::tclprof::", 11) == 0;
}

static int
NodeFor(
    ClGraph *g,
    const char *name,
    const TpFunc *f)
{
    int isNew;
    Tcl_HashEntry *h = Tcl_CreateHashEntry(&g->byName, name, &isNew);
    ClNode *n;

    if (!isNew) {
	n = &g->nodes[IDX(h)];
	if (n->f == NULL) {
	    n->f = f;
	}
	return IDX(h);
    }
    if (g->nNodes == g->capNodes) {
	g->capNodes = g->capNodes ? 2 * g->capNodes : 64;
	g->nodes = ClAlloc(g->nodes, sizeof(ClNode) * (size_t) g->capNodes);
    }
    n = &g->nodes[g->nNodes];
    memset(n, 0, sizeof(*n));
    n->name = name;
    n->f = f;
    n->calls = -1;
    n->cluster = -1;
    SETIDX(h, g->nNodes);
    return g->nNodes++;
}

static int
EdgeFor(
    ClGraph *g,
    int from,
    int to)
{
    int key[2], isNew;
    Tcl_HashEntry *h;
    ClEdge *e;

    key[0] = from;
    key[1] = to;
    h = Tcl_CreateHashEntry(&g->byPair, (const char *) key, &isNew);
    if (!isNew) {
	return IDX(h);
    }
    if (g->nEdges == g->capEdges) {
	g->capEdges = g->capEdges ? 2 * g->capEdges : 64;
	g->edges = ClAlloc(g->edges, sizeof(ClEdge) * (size_t) g->capEdges);
    }
    e = &g->edges[g->nEdges];
    memset(e, 0, sizeof(*e));
    e->from = from;
    e->to = to;
    SETIDX(h, g->nEdges);
    return g->nEdges++;
}

/*
 *----------------------------------------------------------------------
 *
 * GraphBuild --
 *
 *	Fills g from the view's stacks (nodes, their samples, and in modes
 *	other than trace the edges, each counted once per sample) and, in
 *	trace mode, from the profile's exact call counts (nodes never
 *	sampled, the calls, the edges).
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Initializes g; GraphFree releases it.
 *
 *----------------------------------------------------------------------
 */

static void
GraphBuild(
    ClGraph *g,
    const TpProfile *p,
    const TpTree *t,
    const TpView *v)
{
    int *procs = ClAlloc(NULL, sizeof(int) * (v->maxLen + 1));
    Tcl_HashTable types, callerOf;
    Tcl_HashEntry *h;
    uint32_t i, k;
    int n, isNew;

    memset(g, 0, sizeof(*g));
    Tcl_InitHashTable(&g->byName, TCL_STRING_KEYS);
    Tcl_InitHashTable(&g->byPair, 2);
    g->exact = p->mode == TP_MODE_TRACE;
    g->samples = v->samples;

    for (i = 0; i < v->nStacks; i++) {
	const uint32_t *s = v->seq + v->first[i];
	uint64_t count = p->stacks[i].count;

	n = 0;
	for (k = 0; k < v->len[i]; k++) {
	    const TpFunc *f = &t->funcs[s[k]];

	    if (f->kind == TP_KIND_TCL && IsProcType(f->type) && !f->own
		    && !IsOwnName(f->name)) {
		procs[n++] = NodeFor(g, f->name, f);
	    }
	}
	if (n == 0) {
	    continue;
	}
	g->nodes[procs[n - 1]].self += count;
	for (k = 0; k < (uint32_t) n; k++) {
	    ClNode *nd = &g->nodes[procs[k]];

	    if (nd->stamp != i + 1) {
		nd->stamp = i + 1;
		nd->total += count;
	    }
	    if (k > 0 && !g->exact) {
		int ei = EdgeFor(g, procs[k - 1], procs[k]);
		ClEdge *e = &g->edges[ei];	/* After EdgeFor's realloc. */

		if (e->stamp != i + 1) {
		    e->stamp = i + 1;
		    e->weight += count;
		}
	    }
	}
    }
    free(procs);
    if (!g->exact) {
	return;
    }

    /*
     * Trace mode. The trace counts calls by the command one level up: a
     * proc called from a command that is not a proc (a switch or an
     * ensemble that Tcl did not compile, uplevel, a C command evaluating
     * a script) has that command as its caller. Its calls go to the proc
     * above that command when the chain up to it is unambiguous (each
     * command on the way has one caller), which keeps them exact.
     * types: name -> 1 for a node's proc, 2 for tclprof's own procs (the
     * walk up stops there). callerOf: command -> its one caller, or NULL
     * if it has several.
     */

    Tcl_InitHashTable(&types, TCL_STRING_KEYS);
    Tcl_InitHashTable(&callerOf, TCL_STRING_KEYS);
    for (i = 0; i < p->nCalls; i++) {
	const TpCalls *c = &p->calls[i];

	if (c->caller == NULL && IsProcType(c->type)) {
	    h = Tcl_CreateHashEntry(&types, c->callee, &isNew);
	    Tcl_SetHashValue(h, (ClientData) (intptr_t)
		    (IsOwnName(c->callee) ? 2 : 1));
	    if (!IsOwnName(c->callee)) {
		int ni = NodeFor(g, c->callee, NULL);
		ClNode *nd = &g->nodes[ni];

		nd->calls = (nd->calls < 0 ? 0 : nd->calls)
			+ (Tcl_WideInt) c->count;
	    }
	} else if (c->caller != NULL) {
	    h = Tcl_CreateHashEntry(&callerOf, c->callee, &isNew);
	    if (isNew) {
		Tcl_SetHashValue(h, c->caller);
	    } else if (Tcl_GetHashValue(h) != NULL
		    && strcmp(Tcl_GetHashValue(h), c->caller) != 0) {
		Tcl_SetHashValue(h, NULL);
	    }
	}
    }
    for (i = 0; i < p->nCalls; i++) {
	const TpCalls *c = &p->calls[i];
	const char *caller = c->caller;
	int up = 0;

	h = Tcl_FindHashEntry(&types, c->callee);
	if (caller == NULL || h == NULL || IDX(h) != 1) {
	    continue;
	}
	while (caller != NULL && (h = Tcl_FindHashEntry(&types, caller))
		== NULL && up++ < 32) {
	    h = Tcl_FindHashEntry(&callerOf, caller);
	    caller = h != NULL ? Tcl_GetHashValue(h) : NULL;
	}
	h = caller != NULL ? Tcl_FindHashEntry(&types, caller) : NULL;
	if (h != NULL && IDX(h) == 1) {
	    int from = IDX(Tcl_FindHashEntry(&g->byName, caller));
	    int to = IDX(Tcl_FindHashEntry(&g->byName, c->callee));
	    int ei = EdgeFor(g, from, to);

	    g->edges[ei].weight += c->count;
	}
    }
    Tcl_DeleteHashTable(&types);
    Tcl_DeleteHashTable(&callerOf);
}

static void
GraphFree(
    ClGraph *g)
{
    int i;

    for (i = 0; i < g->nClusters; i++) {
	free(g->clusters[i].members);
    }
    free(g->clusters);
    free(g->nodes);
    free(g->edges);
    Tcl_DeleteHashTable(&g->byName);
    Tcl_DeleteHashTable(&g->byPair);
}

/*
 * Sort keys, so that comparisons need no state outside their arguments.
 * Root order (see the top of this file): procs with no caller over the
 * kept edges first, then most samples first, then by name (bytes, as
 * SQLite's default collation compares them). Members are in the same
 * order without the first key (all 0).
 */

typedef struct ClKey {
    int node;			/* Node index. */
    int hasCaller;
    uint64_t samples;		/* The node's total. */
    const char *name;
} ClKey;

static int
CompareKeys(
    const void *a,
    const void *b)
{
    const ClKey *x = a, *y = b;

    if (x->hasCaller != y->hasCaller) {
	return x->hasCaller - y->hasCaller;
    }
    if (x->samples != y->samples) {
	return x->samples > y->samples ? -1 : 1;
    }
    return strcmp(x->name, y->name);
}

/*
 * Output order: clusters by samples, then size (most first), then root
 * name.
 */

static int
CompareClusters(
    const void *a,
    const void *b)
{
    const ClCluster *x = a, *y = b;

    if (x->samples != y->samples) {
	return x->samples > y->samples ? -1 : 1;
    }
    if (x->size != y->size) {
	return y->size - x->size;
    }
    return strcmp(x->rootName, y->rootName);
}

/*
 *----------------------------------------------------------------------
 *
 * GraphCluster --
 *
 *	Clusters g: floods the kept edges breadth first from each proc in
 *	root order that is not yet in a cluster, then sums each cluster's
 *	samples and edge weights (over every edge, kept or not).
 *
 *	The saved file's clusters view computes the same clusters with one
 *	recursive query; it is not used here because a query cannot stop at
 *	procs an earlier root has claimed: it floods from every candidate
 *	root, which cost 10 s for 2000 procs and 8000 edges whose samples do
 *	not follow the calls (trace mode's procs that were called but never
 *	sampled), where this flood is linear in the edges.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Fills g->clusters, g->kept and each node's cluster.
 *
 *----------------------------------------------------------------------
 */

static void
GraphCluster(
    ClGraph *g,
    int directed,
    Tcl_WideInt minWeight)
{
    int n = g->nNodes, i, j, k;
    int *start = ClAlloc(NULL, sizeof(int) * (size_t) (n + 1));
    int *adj = ClAlloc(NULL, sizeof(int) * (size_t) (2 * g->nEdges + 1));
    ClKey *order = ClAlloc(NULL, sizeof(ClKey) * (size_t) (n + 1));
    int *queue = ClAlloc(NULL, sizeof(int) * (size_t) (n + 1));
    char *hasCaller = ClAlloc(NULL, (size_t) (n + 1));
    ClKey *keys = NULL;		/* One cluster's members, to sort. */

    /*
     * The hops the flood may take: kept edges from caller to callee and,
     * undirected, back. Adjacency lists in one array (start[i] is where
     * node i's list begins).
     */

    memset(start, 0, sizeof(int) * (size_t) (n + 1));
    memset(hasCaller, 0, (size_t) (n + 1));
    for (i = 0; i < g->nEdges; i++) {
	const ClEdge *e = &g->edges[i];

	if (e->from != e->to && (Tcl_WideInt) e->weight >= minWeight) {
	    g->kept++;
	    hasCaller[e->to] = 1;
	    start[e->from]++;
	    if (!directed) {
		start[e->to]++;
	    }
	}
    }
    for (i = 0, k = 0; i <= n; i++) {	/* Counts to ends of lists. */
	k += i < n ? start[i] : 0;
	start[i] = k;
    }
    for (i = 0; i < g->nEdges; i++) {	/* Fill backwards from the ends. */
	const ClEdge *e = &g->edges[i];

	if (e->from != e->to && (Tcl_WideInt) e->weight >= minWeight) {
	    adj[--start[e->from]] = e->to;
	    if (!directed) {
		adj[--start[e->to]] = e->from;
	    }
	}
    }
    start[n] = k;

    for (i = 0; i < n; i++) {
	order[i].node = i;
	order[i].hasCaller = hasCaller[i];
	order[i].samples = g->nodes[i].total;
	order[i].name = g->nodes[i].name;
	g->nodes[i].cluster = -1;
    }
    TpSort(order, (size_t) n, sizeof(ClKey), CompareKeys);

    g->clusters = ClAlloc(NULL, sizeof(ClCluster) * (size_t) (n + 1));
    g->nClusters = 0;
    for (i = 0; i < n; i++) {
	int head = 0, tail = 0, root = order[i].node;
	ClCluster *c;

	if (g->nodes[root].cluster >= 0) {
	    continue;
	}
	c = &g->clusters[g->nClusters];
	memset(c, 0, sizeof(*c));
	c->root = root;
	c->rootName = g->nodes[root].name;
	g->nodes[root].cluster = g->nClusters;
	queue[tail++] = root;
	while (head < tail) {
	    int v = queue[head++];

	    for (j = start[v]; j < start[v + 1]; j++) {
		if (g->nodes[adj[j]].cluster < 0) {
		    g->nodes[adj[j]].cluster = g->nClusters;
		    queue[tail++] = adj[j];
		}
	    }
	}

	/*
	 * Members: the root first, the others by samples, then name.
	 */

	c->size = tail;
	c->members = ClAlloc(NULL, sizeof(int) * (size_t) tail);
	keys = ClAlloc(keys, sizeof(ClKey) * (size_t) tail);
	for (j = 0; j < tail; j++) {
	    const ClNode *m = &g->nodes[queue[j]];

	    c->samples += m->self;
	    keys[j].node = queue[j];
	    keys[j].hasCaller = 0;
	    keys[j].samples = m->total;
	    keys[j].name = m->name;
	}
	TpSort(keys + 1, (size_t) (tail - 1), sizeof(ClKey), CompareKeys);
	for (j = 0; j < tail; j++) {
	    c->members[j] = keys[j].node;
	}
	g->nClusters++;
    }

    for (i = 0; i < g->nEdges; i++) {
	const ClEdge *e = &g->edges[i];
	int a = g->nodes[e->from].cluster, b = g->nodes[e->to].cluster;

	if (a == b) {
	    g->clusters[a].internal += e->weight;
	} else {
	    g->clusters[a].external += e->weight;
	    g->clusters[b].external += e->weight;
	}
    }
    TpSort(g->clusters, (size_t) g->nClusters, sizeof(ClCluster),
	    CompareClusters);
    for (i = 0; i < g->nClusters; i++) {
	for (j = 0; j < g->clusters[i].size; j++) {
	    g->nodes[g->clusters[i].members[j]].cluster = i;
	}
    }
    free(start);
    free(adj);
    free(order);
    free(queue);
    free(hasCaller);
    free(keys);
}

/*
 * What the header says of the graph.
 */

static void
Describe(
    Tcl_DString *ds,
    const TpProfile *p,
    const ClGraph *g,
    const TpReportOptions *o)
{
    char buf[512];

    snprintf(buf, sizeof(buf), "tclprof %s clusters: %llu samples, interval"
	    " %d us, clock %s, mode %s\n"
	    "%s call graph: %d procs, %d edges, weight = %s, min weight %lld:"
	    " %d edges kept, %d cluster%s\n", TCLPROF_VERSION,
	    (unsigned long long) g->samples, p->intervalUs,
	    TpClockName(p->clock), TpModeName(p->mode),
	    o->directed ? "directed" : "undirected", g->nNodes, g->nEdges,
	    g->exact ? "exact calls" : "samples on the edge",
	    (long long) (o->minWeight > 0 ? o->minWeight : 1), g->kept,
	    g->nClusters, g->nClusters == 1 ? "" : "s");
    Tcl_DStringAppend(ds, buf, -1);
}

static Tcl_Obj *
NodeDict(
    const TpProfile *p,
    const ClNode *n)
{
    Tcl_Obj *d = Tcl_NewDictObj();

    if (n->f != NULL) {
	TpFuncDictPut(d, p, n->f, n->self, n->total);
    } else {
	Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("name", -1),
		Tcl_NewStringObj(n->name, -1));
	Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("self", -1),
		Tcl_NewWideIntObj(0));
	Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("total", -1),
		Tcl_NewWideIntObj(0));
    }
    if (n->calls >= 0) {
	Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("calls", -1),
		Tcl_NewWideIntObj(n->calls));
    }
    return d;
}

/*
 * A name in the text report: one line per row, so control characters
 * are written escaped, as Tcl would write them.
 */

static void
AppendName(
    Tcl_DString *ds,
    const char *name)
{
    char buf[8];

    for (; *name != '\0'; name++) {
	if ((unsigned char) *name >= 0x20) {
	    Tcl_DStringAppend(ds, name, 1);
	} else if (*name == '\n') {
	    Tcl_DStringAppend(ds, "\\n", 2);
	} else if (*name == '\t') {
	    Tcl_DStringAppend(ds, "\\t", 2);
	} else {
	    snprintf(buf, sizeof(buf), "\\x%02x", (unsigned char) *name);
	    Tcl_DStringAppend(ds, buf, -1);
	}
    }
}

static void
AppendWhere(
    Tcl_DString *ds,
    const ClNode *n)
{
    char buf[32];

    if (n->f != NULL && n->f->file != NULL) {
	Tcl_DStringAppend(ds, "  (", 3);
	Tcl_DStringAppend(ds, n->f->file, -1);
	if (n->f->line > 0) {
	    snprintf(buf, sizeof(buf), ":%d", n->f->line);
	    Tcl_DStringAppend(ds, buf, -1);
	}
	Tcl_DStringAppend(ds, ")", 1);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TpReportClusters --
 *
 *	The clusters of the procs' call graph (see the top of this file),
 *	largest first by samples: each with its root, size, samples, the
 *	weight of its internal and external edges, and its members. A
 *	cluster under -threshold percent of the samples is left out.
 *
 * Results:
 *	TCL_OK; text, or with asValue a dict {weight calls|samples directed
 *	0|1 minWeight n samples n procs n edges {{caller callee weight kept}
 *	...} clusters {{root size samples internal external members {node
 *	...}} ...}}, each node a dict {name kind type self total ?calls?
 *	...} (self: the samples it is the innermost proc of; total: those it
 *	is on the stack of); or TCL_ERROR.
 *
 * Side effects:
 *	Sets the interp result.
 *
 *----------------------------------------------------------------------
 */

int
TpReportClusters(
    Tcl_Interp *interp,
    TpProfile *p,
    TpTree *t,
    TpView *v,
    const TpReportOptions *o)
{
    ClGraph g;
    Tcl_WideInt minWeight = o->minWeight > 0 ? o->minWeight : 1;
    double all = v->samples ? (double) v->samples : 1.0;
    Tcl_Obj *list = Tcl_NewListObj(0, NULL), *edges, *d;
    Tcl_DString ds;
    char buf[128];
    int i, j, hidden = 0;

    GraphBuild(&g, p, t, v);
    GraphCluster(&g, o->directed, minWeight);
    Tcl_DStringInit(&ds);
    Describe(&ds, p, &g, o);
    Tcl_DStringAppend(&ds, "  Members   Samples      %  Internal  External"
	    "  Root / members (self samples)\n", -1);
    for (i = 0; i < g.nClusters; i++) {
	const ClCluster *c = &g.clusters[i];

	if (100.0 * (double) c->samples / all < o->thresholdPct) {
	    hidden++;
	    continue;
	}
	if (o->asValue) {
	    Tcl_Obj *members = Tcl_NewListObj(0, NULL);

	    d = Tcl_NewDictObj();
	    for (j = 0; j < c->size; j++) {
		Tcl_ListObjAppendElement(NULL, members,
			NodeDict(p, &g.nodes[c->members[j]]));
	    }
#define PUT(k, val) Tcl_DictObjPut(NULL, d, Tcl_NewStringObj((k), -1), (val))
	    PUT("root", Tcl_NewStringObj(g.nodes[c->root].name, -1));
	    PUT("size", Tcl_NewIntObj(c->size));
	    PUT("samples", Tcl_NewWideIntObj((Tcl_WideInt) c->samples));
	    PUT("internal", Tcl_NewWideIntObj((Tcl_WideInt) c->internal));
	    PUT("external", Tcl_NewWideIntObj((Tcl_WideInt) c->external));
	    PUT("members", members);
	    Tcl_ListObjAppendElement(NULL, list, d);
	    continue;
	}
	snprintf(buf, sizeof(buf), "%9d %9llu %5.1f%% %9llu %9llu  ", c->size,
		(unsigned long long) c->samples, 100.0 * (double) c->samples
		/ all, (unsigned long long) c->internal,
		(unsigned long long) c->external);
	Tcl_DStringAppend(&ds, buf, -1);
	AppendName(&ds, g.nodes[c->root].name);
	AppendWhere(&ds, &g.nodes[c->root]);
	Tcl_DStringAppend(&ds, "\n", 1);
	if (c->size == 1) {
	    continue;
	}
	for (j = 0; j < c->size; j++) {
	    const ClNode *n = &g.nodes[c->members[j]];

	    snprintf(buf, sizeof(buf), "%19llu %5.1f%%                      "
		    "  ", (unsigned long long) n->self,
		    100.0 * (double) n->self / all);
	    Tcl_DStringAppend(&ds, buf, -1);
	    AppendName(&ds, n->name);
	    Tcl_DStringAppend(&ds, "\n", 1);
	}
    }
    if (hidden > 0) {
	snprintf(buf, sizeof(buf), "(%d cluster%s under %g%% not shown)\n",
		hidden, hidden == 1 ? "" : "s", o->thresholdPct);
	Tcl_DStringAppend(&ds, buf, -1);
    }
    if (o->asValue) {
	edges = Tcl_NewListObj(0, NULL);
	for (i = 0; i < g.nEdges; i++) {
	    const ClEdge *e = &g.edges[i];
	    Tcl_Obj *ed = Tcl_NewDictObj();

	    Tcl_DictObjPut(NULL, ed, Tcl_NewStringObj("caller", -1),
		    Tcl_NewStringObj(g.nodes[e->from].name, -1));
	    Tcl_DictObjPut(NULL, ed, Tcl_NewStringObj("callee", -1),
		    Tcl_NewStringObj(g.nodes[e->to].name, -1));
	    Tcl_DictObjPut(NULL, ed, Tcl_NewStringObj("weight", -1),
		    Tcl_NewWideIntObj((Tcl_WideInt) e->weight));
	    Tcl_DictObjPut(NULL, ed, Tcl_NewStringObj("kept", -1),
		    Tcl_NewBooleanObj(e->from != e->to
		    && (Tcl_WideInt) e->weight >= minWeight));
	    Tcl_ListObjAppendElement(NULL, edges, ed);
	}
	d = Tcl_NewDictObj();
	PUT("weight", Tcl_NewStringObj(g.exact ? "calls" : "samples", -1));
	PUT("directed", Tcl_NewBooleanObj(o->directed));
	PUT("minWeight", Tcl_NewWideIntObj(minWeight));
	PUT("samples", Tcl_NewWideIntObj((Tcl_WideInt) g.samples));
	PUT("procs", Tcl_NewIntObj(g.nNodes));
	PUT("edges", edges);
	PUT("clusters", list);
#undef PUT
	Tcl_DStringFree(&ds);
	Tcl_SetObjResult(interp, d);
    } else {
	Tcl_DecrRefCount(list);
	Tcl_DStringResult(interp, &ds);
    }
    GraphFree(&g);
    return TCL_OK;
}

/*
 * A Graphviz quoted string: quotes and backslashes escaped, a newline as
 * dot's line break (\n), other control characters as spaces.
 */

static void
DotString(
    Tcl_DString *out,
    const char *s)
{
    Tcl_DStringAppend(out, "\"", 1);
    for (; *s != '\0'; s++) {
	if (*s == '"' || *s == '\\') {
	    Tcl_DStringAppend(out, "\\", 1);
	    Tcl_DStringAppend(out, s, 1);
	} else if (*s == '\n') {
	    Tcl_DStringAppend(out, "\\n", 2);
	} else if ((unsigned char) *s < 0x20) {
	    Tcl_DStringAppend(out, " ", 1);
	} else {
	    Tcl_DStringAppend(out, s, 1);
	}
    }
    Tcl_DStringAppend(out, "\"", 1);
}

static void
DotNode(
    Tcl_DString *out,
    const ClGraph *g,
    int i,
    const char *indent)
{
    const ClNode *n = &g->nodes[i];
    char buf[96];
    Tcl_DString label;

    Tcl_DStringInit(&label);
    Tcl_DStringAppend(&label, n->name, -1);
    snprintf(buf, sizeof(buf), "\n%llu self, %llu total",
	    (unsigned long long) n->self, (unsigned long long) n->total);
    Tcl_DStringAppend(&label, buf, -1);
    if (n->calls >= 0) {
	snprintf(buf, sizeof(buf), ", %lld calls", (long long) n->calls);
	Tcl_DStringAppend(&label, buf, -1);
    }
    snprintf(buf, sizeof(buf), "%sn%d [label=", indent, i);
    Tcl_DStringAppend(out, buf, -1);
    DotString(out, Tcl_DStringValue(&label));
    Tcl_DStringAppend(out, "];\n", -1);
    Tcl_DStringFree(&label);
}

/*
 *----------------------------------------------------------------------
 *
 * TpExDot --
 *
 *	The procs' call graph in Graphviz's dot language: one subgraph
 *	"cluster_N" per cluster of two procs or more (labelled with its
 *	root, size and samples), the procs alone in theirs outside, every
 *	edge labelled with its weight, the edges under the minimum weight
 *	dashed and grey.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR if the graph could not be clustered.
 *
 * Side effects:
 *	Appends the file to out.
 *
 *----------------------------------------------------------------------
 */

int
TpExDot(
    Tcl_Interp *interp,
    const TpExportCtx *x,
    Tcl_DString *out)
{
    const TpReportOptions *o = x->o;
    Tcl_WideInt minWeight = o->minWeight > 0 ? o->minWeight : 1;
    ClGraph g;
    Tcl_DString head;
    char buf[160];
    int i, j;

    GraphBuild(&g, x->p, x->t, x->v);
    GraphCluster(&g, o->directed, minWeight);
    Tcl_DStringInit(&head);
    Describe(&head, x->p, &g, o);
    Tcl_DStringAppend(out, "digraph tclprof {\n    label=", -1);
    DotString(out, Tcl_DStringValue(&head));
    Tcl_DStringFree(&head);
    Tcl_DStringAppend(out, ";\n    labelloc=t;\n    fontname=\"Helvetica\";\n"
	    "    rankdir=LR;\n    node [shape=box, style=rounded, "
	    "fontname=\"Helvetica\", fontsize=10];\n    edge [fontname="
	    "\"Helvetica\", fontsize=9];\n", -1);
    for (i = 0; i < g.nClusters; i++) {
	const ClCluster *c = &g.clusters[i];

	if (c->size < 2) {
	    DotNode(out, &g, c->root, "    ");
	    continue;
	}
	snprintf(buf, sizeof(buf), "    subgraph cluster_%d {\n        label=",
		i + 1);
	Tcl_DStringAppend(out, buf, -1);
	Tcl_DStringInit(&head);
	Tcl_DStringAppend(&head, g.nodes[c->root].name, -1);
	snprintf(buf, sizeof(buf), " (%d procs, %llu samples)", c->size,
		(unsigned long long) c->samples);
	Tcl_DStringAppend(&head, buf, -1);
	DotString(out, Tcl_DStringValue(&head));
	Tcl_DStringFree(&head);
	Tcl_DStringAppend(out, ";\n        style=rounded;\n        color="
		"\"#4a7ebb\";\n", -1);
	for (j = 0; j < c->size; j++) {
	    DotNode(out, &g, c->members[j], "        ");
	}
	Tcl_DStringAppend(out, "    }\n", -1);
    }
    for (i = 0; i < g.nEdges; i++) {
	const ClEdge *e = &g.edges[i];
	int kept = (Tcl_WideInt) e->weight >= minWeight;

	snprintf(buf, sizeof(buf), "    n%d -> n%d [label=\"%llu\"%s];\n",
		e->from, e->to, (unsigned long long) e->weight,
		kept ? "" : ", style=dashed, color=grey");
	Tcl_DStringAppend(out, buf, -1);
    }
    Tcl_DStringAppend(out, "}\n", -1);
    GraphFree(&g);
    return TCL_OK;
}
