/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uniqd-farm's Redis Cluster client (cluster.c): routes each command by
 * its key's hash slot, follows MOVED and ASK, and retries what a failed
 * node did not answer.
 */
#ifndef UNIQD_FARM_CLUSTER_H
#define UNIQD_FARM_CLUSTER_H

#include <stddef.h>

#include <hiredis/hiredis.h>

#define FC_NODES_MAX	64

struct fc_node {
	char host[64];
	int port;
	redisContext *c;	/* NULL: not connected (or dropped after a failure) */
};

struct fc_cluster {
	struct fc_node nodes[FC_NODES_MAX];
	int n;
	unsigned short *owner;	/* slot -> index in nodes[] */
	const char *user;	/* AUTH [user] pass on each connection; NULL: default */
	const char *pass;	/* NULL: no AUTH */
	char err[256];		/* the last failure, for the message */
};

/* One command; argv[1] is its key. fc_run() fills reply. */
struct fc_cmd {
	int argc;
	const char *argv[4];
	size_t argvlen[4];
	unsigned int slot;
	int to_node;		/* cluster.c: sent in the current round */
	redisReply *reply;
};

unsigned int fc_slot(const char *key, size_t n);
/* Connect through SERVER, sending AUTH [USER] PASS on every connection
 * when PASS is not NULL (USER NULL: the default user, as redis-cli -a). */
int fc_connect(struct fc_cluster *cl, const char *server, const char *user, const char *pass);
void fc_close(struct fc_cluster *cl);
/* Every command answered (replies may be Redis errors): 0; else -1, cl->err says why. */
int fc_run(struct fc_cluster *cl, struct fc_cmd *cmds, size_t n);
void fc_cmds_free(struct fc_cmd *cmds, size_t n);

#endif
