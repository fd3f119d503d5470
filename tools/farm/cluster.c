// SPDX-License-Identifier: GPL-2.0
/*
 * A Redis Cluster client small enough to read: hiredis speaks the protocol,
 * this file routes each command to the node that owns its key's hash slot
 * (CLUSTER SLOTS, MOVED, ASK) and retries what a failed node did not
 * answer. It also works against a single Redis without cluster mode.
 *
 * Commands go in rounds: every command still pending is pipelined to its
 * node, then the replies are read. A MOVED reply updates the slot table and
 * the command goes again in the next round; a node that fails drops its
 * connection, the slot table is read again after a pause, and the round is
 * repeated, a few times at most. A command is answered once, whatever the
 * rounds: SET NX and RPUSH are only sent again when their node gave no
 * reply, and farm.c only uses commands for which that is safe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster.h"

#define SLOTS		16384
#define NO_NODE		0xffff
#define ROUNDS		6

/* CRC16-CCITT (XMODEM), the slot hash of the Redis Cluster specification. */
static unsigned int crc16(const char *p, size_t n)
{
	unsigned int crc = 0;

	while (n--) {
		crc ^= (unsigned int)(unsigned char)*p++ << 8;
		for (int i = 0; i < 8; i++)
			crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
	}
	return crc & 0xffff;
}

/* The slot of a key: the hash tag between the first { and the next }, if any. */
unsigned int fc_slot(const char *key, size_t n)
{
	const char *open = memchr(key, '{', n), *close;

	if (open) {
		close = memchr(open + 1, '}', n - (size_t)(open + 1 - key));
		if (close && close > open + 1)
			return crc16(open + 1, (size_t)(close - open - 1)) % SLOTS;
	}
	return crc16(key, n) % SLOTS;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int node_find(struct fc_cluster *cl, const char *host, int port)
{
	for (int i = 0; i < cl->n; i++)
		if (cl->nodes[i].port == port && !strcmp(cl->nodes[i].host, host))
			return i;
	if (cl->n == FC_NODES_MAX || strlen(host) >= sizeof(cl->nodes[0].host))
		return -1;
	snprintf(cl->nodes[cl->n].host, sizeof(cl->nodes[0].host), "%s", host);
	cl->nodes[cl->n].port = port;
	cl->nodes[cl->n].c = NULL;
	return cl->n++;
}

static void node_drop(struct fc_node *nd)
{
	if (nd->c)
		redisFree(nd->c);
	nd->c = NULL;
}

/* The node's connection, made now if it has none. */
static redisContext *node_ctx(struct fc_cluster *cl, int i)
{
	struct fc_node *nd = &cl->nodes[i];
	struct timeval tmo = { 2, 0 };

	if (nd->c && !nd->c->err)
		return nd->c;
	node_drop(nd);
	nd->c = redisConnectWithTimeout(nd->host, nd->port, tmo);
	if (!nd->c || nd->c->err) {
		snprintf(cl->err, sizeof(cl->err), "%s:%d: %s", nd->host, nd->port,
			 nd->c ? nd->c->errstr : "cannot connect");
		node_drop(nd);
		return NULL;
	}
	redisSetTimeout(nd->c, tmo);
	if (cl->pass) {
		/* Redis 6 ACLs: AUTH user pass; the default user: AUTH pass. */
		redisReply *r = cl->user ? redisCommand(nd->c, "AUTH %s %s", cl->user, cl->pass) :
					   redisCommand(nd->c, "AUTH %s", cl->pass);

		if (!r || r->type == REDIS_REPLY_ERROR) {
			snprintf(cl->err, sizeof(cl->err), "%s:%d: AUTH%s%s: %s", nd->host,
				 nd->port, cl->user ? " as " : "", cl->user ? cl->user : "",
				 r ? r->str : nd->c->errstr);
			if (r)
				freeReplyObject(r);
			node_drop(nd);
			return NULL;
		}
		freeReplyObject(r);
	}
	return nd->c;
}

/* Slot ownership from node @i; 0, or -1 if it cannot tell. */
static int slots_from(struct fc_cluster *cl, int i)
{
	redisContext *c = node_ctx(cl, i);
	redisReply *r;
	int ok = -1;

	if (!c)
		return -1;
	r = redisCommand(c, "CLUSTER SLOTS");
	if (!r) {
		node_drop(&cl->nodes[i]);
		return -1;
	}
	if (r->type == REDIS_REPLY_ERROR && strstr(r->str, "cluster support disabled")) {
		/* A single Redis: it owns every slot. */
		for (int s = 0; s < SLOTS; s++)
			cl->owner[s] = (unsigned short)i;
		ok = 0;
	} else if (r->type == REDIS_REPLY_ARRAY && r->elements) {
		for (size_t k = 0; k < r->elements; k++) {
			redisReply *e = r->element[k], *m;
			int nd;

			if (e->type != REDIS_REPLY_ARRAY || e->elements < 3)
				continue;
			m = e->element[2];
			if (m->type != REDIS_REPLY_ARRAY || m->elements < 2 ||
			    m->element[0]->type != REDIS_REPLY_STRING)
				continue;
			nd = node_find(cl, m->element[0]->str, (int)m->element[1]->integer);
			if (nd < 0)
				continue;
			for (long long s = e->element[0]->integer;
			     s <= e->element[1]->integer && s < SLOTS; s++)
				if (s >= 0)
					cl->owner[s] = (unsigned short)nd;
		}
		ok = 0;
	} else {
		snprintf(cl->err, sizeof(cl->err), "%s:%d: CLUSTER SLOTS: %s",
			 cl->nodes[i].host, cl->nodes[i].port,
			 r->type == REDIS_REPLY_ERROR ? r->str : "no slots");
	}
	freeReplyObject(r);
	return ok;
}

/* Read the slot table from the first node that answers. */
static int slots_load(struct fc_cluster *cl)
{
	for (int s = 0; s < SLOTS; s++)
		cl->owner[s] = NO_NODE;
	for (int i = 0; i < cl->n; i++)
		if (!slots_from(cl, i))
			return 0;
	return -1;
}

int fc_connect(struct fc_cluster *cl, const char *server, const char *user, const char *pass)
{
	char host[64];
	const char *colon = strrchr(server, ':');
	int port = 6379;

	memset(cl, 0, sizeof(*cl));
	cl->user = user;
	cl->pass = pass;
	cl->owner = malloc(SLOTS * sizeof(*cl->owner));
	if (!cl->owner)
		return -1;
	if (colon) {
		port = atoi(colon + 1);
		snprintf(host, sizeof(host), "%.*s", (int)(colon - server), server);
	} else {
		snprintf(host, sizeof(host), "%s", server);
	}
	if (port <= 0 || port > 65535 || node_find(cl, host, port) < 0) {
		snprintf(cl->err, sizeof(cl->err), "'%s' is not HOST:PORT", server);
		return -1;
	}
	return slots_load(cl);
}

void fc_close(struct fc_cluster *cl)
{
	for (int i = 0; i < cl->n; i++)
		node_drop(&cl->nodes[i]);
	free(cl->owner);
	cl->owner = NULL;
}

/* "MOVED 3999 127.0.0.1:6381" or "ASK ...": the node named, or -1. */
static int redirect(struct fc_cluster *cl, const char *msg, unsigned int *slot)
{
	char host[64];
	int port;

	if (sscanf(msg, "%*s %u %63[^:]:%d", slot, host, &port) != 3 || *slot >= SLOTS)
		return -1;
	return node_find(cl, host, port);
}

static int send_one(redisContext *c, struct fc_cmd *cmd)
{
	return redisAppendCommandArgv(c, cmd->argc, cmd->argv, cmd->argvlen);
}

/* An ASK redirection: ASKING, then the command, on that node alone. */
static redisReply *ask(struct fc_cluster *cl, int nd, struct fc_cmd *cmd)
{
	redisContext *c = node_ctx(cl, nd);
	redisReply *r;

	if (!c)
		return NULL;
	r = redisCommand(c, "ASKING");
	if (!r) {
		node_drop(&cl->nodes[nd]);
		return NULL;
	}
	freeReplyObject(r);
	r = redisCommandArgv(c, cmd->argc, cmd->argv, cmd->argvlen);
	if (!r)
		node_drop(&cl->nodes[nd]);
	return r;
}

/* One round over the pending commands of node @nd; how many failed to reach it. */
static int round_node(struct fc_cluster *cl, int nd, struct fc_cmd *cmds, size_t n,
		      int *moved)
{
	redisContext *c = node_ctx(cl, nd);
	size_t sent = 0;
	int lost = 0;

	/* Which commands go to @nd is fixed before any reply moves a slot. */
	for (size_t i = 0; i < n; i++)
		cmds[i].to_node = !cmds[i].reply && cl->owner[cmds[i].slot] == nd;
	for (size_t i = 0; c && i < n; i++) {
		if (!cmds[i].to_node)
			continue;
		if (send_one(c, &cmds[i]) != REDIS_OK)
			break;
		sent++;
	}
	for (size_t i = 0; i < n; i++) {
		redisReply *r = NULL;
		unsigned int slot;
		int to;

		if (!cmds[i].to_node)
			continue;
		if (!c || !sent || redisGetReply(c, (void **)&r) != REDIS_OK || !r) {
			lost++;
			if (c)
				snprintf(cl->err, sizeof(cl->err), "%s:%d: %s",
					 cl->nodes[nd].host, cl->nodes[nd].port,
					 c->errstr[0] ? c->errstr : "no reply");
			continue;
		}
		sent--;
		if (r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "MOVED ", 6) &&
		    (to = redirect(cl, r->str, &slot)) >= 0) {
			cl->owner[slot] = (unsigned short)to;
			(*moved)++;
			freeReplyObject(r);
			continue;
		}
		if (r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "ASK ", 4) &&
		    (to = redirect(cl, r->str, &slot)) >= 0) {
			freeReplyObject(r);
			r = ask(cl, to, &cmds[i]);
			if (!r) {
				lost++;
				continue;
			}
		}
		if (r->type == REDIS_REPLY_ERROR &&
		    (!strncmp(r->str, "TRYAGAIN", 8) || !strncmp(r->str, "CLUSTERDOWN", 11))) {
			snprintf(cl->err, sizeof(cl->err), "%s", r->str);
			freeReplyObject(r);
			lost++;
			continue;
		}
		cmds[i].reply = r;
	}
	if (lost && c)
		node_drop(&cl->nodes[nd]);
	return lost;
}

int fc_run(struct fc_cluster *cl, struct fc_cmd *cmds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cmds[i].slot = fc_slot(cmds[i].argv[1], cmds[i].argvlen[1]);
		cmds[i].reply = NULL;
	}
	for (int round = 0; round < ROUNDS; round++) {
		int lost = 0, moved = 0, pending = 0;

		for (int nd = 0; nd < cl->n; nd++)
			lost += round_node(cl, nd, cmds, n, &moved);
		for (size_t i = 0; i < n; i++) {
			if (cmds[i].reply)
				continue;
			pending++;
			if (cl->owner[cmds[i].slot] == NO_NODE) {
				snprintf(cl->err, sizeof(cl->err),
					 "no node serves slot %u", cmds[i].slot);
				lost++;
			}
		}
		if (!pending)
			return 0;
		if (lost) {
			/* A node failed: the cluster may fail over; ask again. */
			sleep_ms(200L << round);
			slots_load(cl);
		}
	}
	return -1;
}

void fc_cmds_free(struct fc_cmd *cmds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (cmds[i].reply)
			freeReplyObject(cmds[i].reply);
		cmds[i].reply = NULL;
	}
}
