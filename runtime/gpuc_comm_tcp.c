/* gpuc_comm_tcp.c: the collectives of gpuc_comm.h between processes, over TCP
 * (docs/sharding.md), for executables run as `prog --rank R --ranks N` or
 * under mpirun/srun without MPI linked.
 *
 * Bootstrap: rank 0 listens on PORT (every interface), the other ranks
 * connect to HOST:PORT, retrying until the timeout, and send a hello (magic,
 * protocol version, rank, size); rank 0 answers each once all have joined,
 * or refuses one with a message (wrong size, a rank twice, another version).
 * The connections form a star through rank 0, and every collective goes
 * through it: each rank sends its bytes to rank 0, which concatenates them
 * (all_gather) or folds them in rank order exactly as gpuc_comm_threads.c
 * does (all_reduce), and sends the result back. Every message carries the
 * collective it belongs to and its length, so ranks that disagree (other
 * arguments, another program) get an error, not wrong bytes. After a failure
 * the communicator is broken: every later call fails at once, and the
 * message stays in gpuc_comm_tcp_error. A rank that exits closes its socket,
 * so the others fail instead of waiting.
 */
#include "gpuc_comm.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "rt_internal.h"

enum {
    HELLO_BYTES = 24,        /* magic[8], version, rank, size, status (little-endian u32) */
    REFUSAL_BYTES = 256,     /* after a hello with status 1: rank 0's reason */
    PROTOCOL_VERSION = 1,
};
static const char MAGIC[8] = { 'G', 'P', 'U', 'C', 'C', 'O', 'M', 'M' };

/* What a message belongs to (checked by the receiver). */
typedef enum Op { OP_ALL_GATHER = 1, OP_ALL_REDUCE, OP_BARRIER, OP_GATHER, OP_BROADCAST } Op;
static const char *const op_names[] = { "?", "all_gather", "all_reduce", "barrier", "gather", "broadcast" };

typedef struct CommTcp {
    GpucComm comm;
    int *fds;          /* rank 0: fds[r] is rank r's socket (r >= 1); others: fds[0] is rank 0's */
    bool broken;       /* a collective failed: the streams are out of step */
    char error[768];   /* the first failure */
} CommTcp;

static CommTcp *state(const GpucComm *c) { return (CommTcp *)c->impl; }

static int fail(CommTcp *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(CommTcp *s, const char *fmt, ...) {
    if (!s->broken) {
        int n = snprintf(s->error, sizeof s->error, "rank %d: ", s->comm.rank);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->error + n, sizeof s->error - (size_t)n, fmt, ap);
        va_end(ap);
        s->broken = true;
    }
    rt_set_last_error("%s", s->error);
    return 1;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void put_u32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) { p[i] = (unsigned char)(v >> (8 * i)); }
}
static uint32_t get_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void put_u64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) { p[i] = (unsigned char)(v >> (8 * i)); }
}
static uint64_t get_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) { v = v << 8 | p[i]; }
    return v;
}

/* All of buf, or -1 with errno (EPIPE for a closed peer). */
static int send_all(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) { continue; }
        if (k <= 0) { return -1; }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* All of buf: 0; the peer closed first: 1 (*got says how much came); an error: -1 with errno. */
static int recv_all(int fd, void *buf, size_t n, size_t *got) {
    char *p = buf;
    size_t have = 0;
    while (have < n) {
        ssize_t k = recv(fd, p + have, n - have, 0);
        if (k < 0 && errno == EINTR) { continue; }
        if (k < 0) { if (got) { *got = have; } return -1; }
        if (k == 0) { if (got) { *got = have; } return 1; }
        have += (size_t)k;
    }
    if (got) { *got = have; }
    return 0;
}

/* ---- messages: op (u32), padding, length (u64), then the bytes ---- */

static int send_msg(CommTcp *s, int peer, Op op, const void *data, size_t bytes) {
    unsigned char head[16] = { 0 };
    put_u32(head, (uint32_t)op);
    put_u64(head + 8, bytes);
    int fd = s->fds[s->comm.rank == 0 ? peer : 0];
    if (send_all(fd, head, sizeof head) != 0 || (bytes && send_all(fd, data, bytes) != 0)) {
        return fail(s, "%s: sending to rank %d failed: %s%s", op_names[op], peer, strerror(errno),
                    errno == EPIPE || errno == ECONNRESET ? " (it exited or failed: see its messages)" : "");
    }
    return 0;
}

/* The header of the next message from peer; its length in *bytes. Another
 * op, or a length other than `expect` (unless expect is SIZE_MAX), fails. */
static int recv_head(CommTcp *s, int peer, Op op, size_t expect, size_t *bytes) {
    unsigned char head[16];
    int fd = s->fds[s->comm.rank == 0 ? peer : 0];
    int rc = recv_all(fd, head, sizeof head, NULL);
    if (rc != 0) {
        return fail(s, "%s: rank %d %s", op_names[op], peer,
                    rc > 0 ? "closed the connection (it exited or failed: see its messages)" : strerror(errno));
    }
    uint32_t got_op = get_u32(head);
    *bytes = (size_t)get_u64(head + 8);
    if (got_op != (uint32_t)op) {
        return fail(s, "rank %d is in %s %s but this rank is in %s: the ranks run different programs or arguments",
                    peer, got_op < 6 ? "a" : "an unknown collective", got_op < 6 ? op_names[got_op] : "", op_names[op]);
    }
    if (expect != SIZE_MAX && *bytes != expect) {
        return fail(s, "%s: rank %d sent %zu bytes where this rank has %zu: the ranks disagree (different inputs or "
                    "programs?)", op_names[op], peer, *bytes, expect);
    }
    return 0;
}

static int recv_msg(CommTcp *s, int peer, Op op, void *data, size_t bytes) {
    size_t len;
    if (recv_head(s, peer, op, bytes, &len) != 0) { return 1; }
    int rc = bytes ? recv_all(s->fds[s->comm.rank == 0 ? peer : 0], data, bytes, NULL) : 0;
    if (rc != 0) {
        return fail(s, "%s: rank %d %s", op_names[op], peer, rc > 0 ? "closed the connection" : strerror(errno));
    }
    return 0;
}

/* Rank 0: every rank's `bytes` into all[r * bytes] (its own from send). Others: send theirs. */
static int to_root(CommTcp *s, Op op, const void *send, size_t bytes, void *all) {
    if (s->comm.rank != 0) { return send_msg(s, 0, op, send, bytes); }
    if (bytes) { memmove(all, send, bytes); }
    for (int r = 1; r < s->comm.size; r++) {
        if (recv_msg(s, r, op, (char *)all + (size_t)r * bytes, bytes) != 0) { return 1; }
    }
    return 0;
}

/* Rank 0 sends buf to every rank; the others receive it. */
static int from_root(CommTcp *s, Op op, void *buf, size_t bytes) {
    if (s->comm.rank != 0) { return recv_msg(s, 0, op, buf, bytes); }
    for (int r = 1; r < s->comm.size; r++) {
        if (send_msg(s, r, op, buf, bytes) != 0) { return 1; }
    }
    return 0;
}

/* ---- the vtable ---- */

static int tcp_all_gather(const GpucComm *c, const void *send, void *recv, size_t bytes, void *stream) {
    (void)stream;
    CommTcp *s = state(c);
    if (s->broken) { return fail(s, "all_gather after an earlier failure"); }
    size_t total = bytes * (size_t)c->size;
    int rc;
    if (c->rank == 0) {
        rc = to_root(s, OP_ALL_GATHER, send, bytes, recv) || from_root(s, OP_ALL_GATHER, recv, total);
    } else {
        /* send may lie inside recv: send before receiving over it */
        rc = send_msg(s, 0, OP_ALL_GATHER, send, bytes) || recv_msg(s, 0, OP_ALL_GATHER, recv, total);
    }
    if (rc != 0 && total) { memset(recv, 0, total); }   /* callers that go on see zeros, not garbage */
    return rc;
}

/* Integer sums wrap: computed on the unsigned type of the same width. The
 * same fold as gpuc_comm_threads.c (rank 0's value, then ranks 1.. in order). */
#define FOLD(T, U)                                                                 \
    for (size_t k = 0; k < count; k++) {                                           \
        T acc = ((const T *)all)[k];                                               \
        for (int r = 1; r < size; r++) {                                           \
            T x = ((const T *)all)[(size_t)r * count + k];                         \
            if (op == GPUC_COMM_SUM) { acc = (T)((U)acc + (U)x); }                 \
            else if (op == GPUC_COMM_MIN) { acc = acc < x ? acc : x; }             \
            else { acc = acc > x ? acc : x; }                                      \
        }                                                                          \
        ((T *)out)[k] = acc;                                                       \
    }

static void fold(const void *all, void *out, size_t count, int size, GpucCommType type, GpucCommOp op) {
    switch (type) {
    case GPUC_COMM_I32: FOLD(int32_t, uint32_t) break;
    case GPUC_COMM_I64: FOLD(int64_t, uint64_t) break;
    case GPUC_COMM_U32: FOLD(uint32_t, uint32_t) break;
    case GPUC_COMM_U64: FOLD(uint64_t, uint64_t) break;
    case GPUC_COMM_F32: FOLD(float, float) break;
    case GPUC_COMM_F64: FOLD(double, double) break;
    }
}

static int tcp_all_reduce(const GpucComm *c, const void *send, void *recv, size_t count, GpucCommType type,
                          GpucCommOp op, void *stream) {
    (void)stream;
    CommTcp *s = state(c);
    static const size_t width[] = { 4, 8, 4, 8, 4, 8 };  /* ORDER COMM TYPE */
    if (s->broken) { return fail(s, "all_reduce after an earlier failure"); }
    if ((int)type < 0 || (int)type > GPUC_COMM_F64 || (int)op < 0 || (int)op > GPUC_COMM_MAX) {
        rt_set_last_error("gpuc_comm all_reduce: type %d or operator %d out of range", (int)type, (int)op);
        return 1;
    }
    size_t bytes = count * width[type];
    int rc;
    if (c->rank != 0) {
        rc = send_msg(s, 0, OP_ALL_REDUCE, send, bytes) || recv_msg(s, 0, OP_ALL_REDUCE, recv, bytes);
    } else {
        void *all = malloc(bytes * (size_t)c->size + 1);
        rc = all ? to_root(s, OP_ALL_REDUCE, send, bytes, all) : fail(s, "all_reduce: out of memory");
        if (rc == 0) {
            fold(all, recv, count, c->size, type, op);
            rc = from_root(s, OP_ALL_REDUCE, recv, bytes);
        }
        free(all);
    }
    if (rc != 0 && bytes) { memset(recv, 0, bytes); }
    return rc;
}

static int tcp_barrier(const GpucComm *c) {
    CommTcp *s = state(c);
    if (s->broken) { return fail(s, "barrier after an earlier failure"); }
    char one = 1, *all = c->rank == 0 ? malloc((size_t)c->size) : NULL;
    if (c->rank == 0 && !all) { return fail(s, "barrier: out of memory"); }
    int rc = to_root(s, OP_BARRIER, &one, 1, all) || from_root(s, OP_BARRIER, &one, 1);
    free(all);
    return rc;
}

int gpuc_comm_tcp_gather(const GpucComm *c, const void *send, size_t bytes, void **recv, size_t *recv_bytes) {
    CommTcp *s = state(c);
    *recv = NULL;
    *recv_bytes = 0;
    if (s->broken) { return fail(s, "gather after an earlier failure"); }
    if (c->rank != 0) { return send_msg(s, 0, OP_GATHER, send, bytes); }
    size_t cap = bytes, total = bytes;
    char *all = malloc(cap + 1);
    if (!all) { return fail(s, "gather: out of memory"); }
    if (bytes) { memcpy(all, send, bytes); }
    for (int r = 1; r < c->size; r++) {
        size_t len;
        if (recv_head(s, r, OP_GATHER, SIZE_MAX, &len) != 0) { free(all); return 1; }
        if (total + len > cap) {
            cap = (total + len) * 2;
            char *grown = realloc(all, cap + 1);
            if (!grown) { free(all); return fail(s, "gather: out of memory (%zu bytes)", total + len); }
            all = grown;
        }
        int rc = len ? recv_all(s->fds[r], all + total, len, NULL) : 0;
        if (rc != 0) {
            free(all);
            return fail(s, "gather: rank %d %s", r, rc > 0 ? "closed the connection" : strerror(errno));
        }
        total += len;
    }
    *recv = all;
    *recv_bytes = total;
    return 0;
}

int gpuc_comm_tcp_broadcast(const GpucComm *c, void *buf, size_t bytes) {
    CommTcp *s = state(c);
    if (s->broken) { return fail(s, "broadcast after an earlier failure"); }
    return from_root(s, OP_BROADCAST, buf, bytes);
}

const char *gpuc_comm_tcp_error(const GpucComm *c) {
    return c && state(c)->broken ? state(c)->error : NULL;
}

/* ---- the bootstrap ---- */

typedef struct Boot {
    const char *host, *port;
    int rank, size;
    double deadline, timeout;
    char *err;
    size_t errlen;
} Boot;

static int boot_fail(const Boot *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int boot_fail(const Boot *b, const char *fmt, ...) {
    int n = snprintf(b->err, b->errlen, "rank %d of %d: ", b->rank, b->size);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->err + n, b->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static void hello(unsigned char *h, int rank, int size, int status) {
    memcpy(h, MAGIC, sizeof MAGIC);
    put_u32(h + 8, PROTOCOL_VERSION);
    put_u32(h + 12, (uint32_t)rank);
    put_u32(h + 16, (uint32_t)size);
    put_u32(h + 20, (uint32_t)status);
}

/* The first bytes a wrong peer sent, printable. */
static void shown(const unsigned char *p, size_t n, char *out, size_t size) {
    size_t k = 0;
    for (size_t i = 0; i < n && k + 5 < size; i++) {
        k += (size_t)snprintf(out + k, size - k, p[i] >= 32 && p[i] < 127 ? "%c" : "\\x%02x", p[i]);
    }
    out[k] = '\0';
}

static void set_recv_timeout(int fd, double seconds) {
    struct timeval tv = { 0, 0 };
    if (seconds > 0) {
        tv.tv_sec = (time_t)seconds;
        tv.tv_usec = (suseconds_t)((seconds - (double)tv.tv_sec) * 1e6);
        if (tv.tv_sec == 0 && tv.tv_usec == 0) { tv.tv_usec = 1000; }
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

static void tune(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int resolve(const Boot *b, bool passive, struct addrinfo **out) {
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    int rc = getaddrinfo(passive ? NULL : b->host, b->port, &hints, out);
    if (rc != 0) {
        return boot_fail(b, "bad address %s:%s: %s", b->host, b->port,
                         rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
    }
    return 0;
}

/* Rank 0: listen, take size - 1 hellos, answer them all. */
static int boot_root(const Boot *b, int *fds) {
    struct addrinfo *ai = NULL;
    if (resolve(b, false, &ai) != 0) { return -1; }   /* the address the others use must make sense */
    freeaddrinfo(ai);
    if (resolve(b, true, &ai) != 0) { return -1; }
    int lfd = -1, err = 0;
    for (struct addrinfo *a = ai; a && lfd < 0; a = a->ai_next) {
        lfd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        int one = 1;
        if (lfd >= 0 && (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
                         bind(lfd, a->ai_addr, a->ai_addrlen) != 0 || listen(lfd, 128) != 0)) {
            err = errno;
            close(lfd);
            lfd = -1;
        }
    }
    freeaddrinfo(ai);
    if (lfd < 0) {
        return boot_fail(b, "cannot listen on port %s: %s%s", b->port, strerror(err),
                         err == EADDRINUSE ? " (set GPUC_MASTER_PORT to a free port)" : "");
    }
    int joined = 0, rc = 0;
    while (joined < b->size - 1 && rc == 0) {
        double left = b->deadline - now_s();
        struct pollfd p = { lfd, POLLIN, 0 };
        int ready = left > 0 ? poll(&p, 1, (int)(left * 1000) + 1) : 0;
        if (ready < 0 && errno == EINTR) { continue; }
        if (ready <= 0) {
            char missing[256] = "";
            size_t k = 0;
            for (int r = 1; r < b->size && k < sizeof missing - 16; r++) {
                if (fds[r] < 0) { k += (size_t)snprintf(missing + k, sizeof missing - k, "%s%d", k ? ", " : "", r); }
            }
            rc = boot_fail(b, "timed out after %g s waiting on port %s for rank%s %s to connect (%d of %d joined)",
                           b->timeout, b->port, b->size - 1 - joined > 1 ? "s" : "", missing, joined + 1, b->size);
            break;
        }
        struct sockaddr_storage from;
        socklen_t fromlen = sizeof from;
        int fd = accept(lfd, (struct sockaddr *)&from, &fromlen);
        if (fd < 0) { continue; }
        char who[NI_MAXHOST] = "?";
        getnameinfo((struct sockaddr *)&from, fromlen, who, sizeof who, NULL, 0, NI_NUMERICHOST);
        set_recv_timeout(fd, b->deadline - now_s());
        unsigned char h[HELLO_BYTES];
        size_t got = 0;
        int r = recv_all(fd, h, sizeof h, &got);
        char seen[128];
        shown(h, got, seen, sizeof seen);
        if (got >= 1 && memcmp(h, MAGIC, got < 8 ? got : 8) != 0) {
            rc = boot_fail(b, "a connection from %s to port %s is not a gpuc rank (wrong peer or protocol: it sent "
                           "'%s')", who, b->port, seen);
        } else if (r != 0) {
            rc = boot_fail(b, "a connection from %s to port %s %s before its hello (wrong peer or protocol?)", who,
                           b->port, r > 0 ? "closed" : "timed out");
        } else {
            uint32_t version = get_u32(h + 8), rank = get_u32(h + 12), size = get_u32(h + 16);
            char why[REFUSAL_BYTES] = "";
            if (version != PROTOCOL_VERSION) {
                snprintf(why, sizeof why, "protocol version %u, but rank 0 speaks version %d (another gpuc?)",
                         version, PROTOCOL_VERSION);
            } else if (size != (uint32_t)b->size) {
                snprintf(why, sizeof why, "rank %u says there are %u ranks, but rank 0 has %d", rank, size, b->size);
            } else if (rank < 1 || rank >= (uint32_t)b->size) {
                snprintf(why, sizeof why, "rank %u is out of range for %d ranks", rank, b->size);
            } else if (fds[rank] >= 0) {
                snprintf(why, sizeof why, "rank %u connected twice (the second from %s)", rank, who);
            }
            if (why[0]) {
                unsigned char no[HELLO_BYTES + REFUSAL_BYTES] = { 0 };
                hello(no, 0, b->size, 1);
                memcpy(no + HELLO_BYTES, why, strlen(why));
                send_all(fd, no, sizeof no);
                rc = boot_fail(b, "refused a connection from %s: %s", who, why);
            } else {
                set_recv_timeout(fd, 0);
                tune(fd);
                fds[rank] = fd;
                joined++;
                continue;
            }
        }
        close(fd);
    }
    close(lfd);
    for (int r = 1; r < b->size && rc == 0; r++) {
        unsigned char yes[HELLO_BYTES];
        hello(yes, 0, b->size, 0);
        if (send_all(fds[r], yes, sizeof yes) != 0) {
            rc = boot_fail(b, "rank %d went away during the bootstrap: %s", r, strerror(errno));
        }
    }
    return rc;
}

/* One non-blocking connect within the time left: 0, or -1 with errno. */
static int connect_within(int fd, const struct sockaddr *addr, socklen_t len, double left) {
    int flags = fcntl(fd, F_GETFL, 0);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int rc = connect(fd, addr, len);
    if (rc != 0 && errno == EINPROGRESS) {
        struct pollfd p = { fd, POLLOUT, 0 };
        int ready = poll(&p, 1, left > 0 ? (int)(left * 1000) + 1 : 0);
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (ready <= 0) {
            errno = ETIMEDOUT;
        } else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0) {
            rc = 0;
        } else {
            errno = soerr;
        }
    }
    fcntl(fd, F_SETFL, flags);
    return rc == 0 ? 0 : -1;
}

/* Ranks 1..: connect to rank 0 (retrying), say hello, wait for the answer. */
static int boot_leaf(const Boot *b, int *fd_out) {
    struct addrinfo *ai = NULL;
    if (resolve(b, false, &ai) != 0) { return -1; }
    int fd = -1, last = ECONNREFUSED;
    double pause = 0.05;
    while (fd < 0) {
        for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
            fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
            if (fd >= 0 && connect_within(fd, a->ai_addr, a->ai_addrlen, b->deadline - now_s()) != 0) {
                last = errno;
                close(fd);
                fd = -1;
            }
        }
        double left = b->deadline - now_s();
        if (fd < 0 && left <= 0) {
            freeaddrinfo(ai);
            return boot_fail(b, "cannot connect to rank 0 at %s:%s: timed out after %g s (last error: %s; is rank 0 "
                             "running, and GPUC_MASTER_ADDR its host?)", b->host, b->port, b->timeout, strerror(last));
        }
        if (fd < 0) {
            struct timespec ts = { 0, (long)((pause < left ? pause : left) * 1e9) };
            nanosleep(&ts, NULL);
            pause = pause < 0.5 ? pause * 2 : 1.0;
        }
    }
    freeaddrinfo(ai);
    unsigned char h[HELLO_BYTES + REFUSAL_BYTES];
    hello(h, b->rank, b->size, 0);
    if (send_all(fd, h, HELLO_BYTES) != 0) {
        close(fd);
        return boot_fail(b, "%s:%s: sending the hello failed: %s", b->host, b->port, strerror(errno));
    }
    set_recv_timeout(fd, b->deadline - now_s());
    size_t got = 0;
    int r = recv_all(fd, h, HELLO_BYTES, &got);
    char seen[128];
    shown(h, got, seen, sizeof seen);
    int rc = 0;
    if (got >= 1 && memcmp(h, MAGIC, got < 8 ? got : 8) != 0) {
        rc = boot_fail(b, "%s:%s is not a gpuc rank 0 (wrong peer or protocol: it answered '%s')", b->host, b->port,
                       seen);
    } else if (r != 0) {
        rc = boot_fail(b, "%s:%s %s during the handshake (%s)", b->host, b->port,
                       r > 0 ? "closed the connection" : "did not answer in time",
                       r > 0 ? "a wrong peer, or rank 0 failed: see its messages"
                             : "are all ranks started? GPUC_BOOTSTRAP_TIMEOUT sets the wait");
    } else if (get_u32(h + 8) != PROTOCOL_VERSION) {
        rc = boot_fail(b, "%s:%s speaks gpuc protocol version %u, this rank %d", b->host, b->port, get_u32(h + 8),
                       PROTOCOL_VERSION);
    } else if (get_u32(h + 20) != 0) {
        memset(h + HELLO_BYTES, 0, REFUSAL_BYTES);
        recv_all(fd, h + HELLO_BYTES, REFUSAL_BYTES - 1, NULL);
        rc = boot_fail(b, "rank 0 at %s:%s refused this rank: %s", b->host, b->port, (char *)h + HELLO_BYTES);
    }
    if (rc != 0) {
        close(fd);
        return rc;
    }
    set_recv_timeout(fd, 0);
    tune(fd);
    *fd_out = fd;
    return 0;
}

int gpuc_comm_tcp_new(const char *host, const char *port, int rank, int size, double timeout_s, GpucComm **out,
                      char *err, size_t errlen) {
    *out = NULL;
    Boot b = { host, port, rank, size, now_s() + timeout_s, timeout_s, err, errlen };
    if (size < 1 || rank < 0 || rank >= size) {
        boot_fail(&b, "rank %d is out of range for %d ranks", rank, size);
        return GPUC_ERROR_INVALID_VALUE;
    }
    CommTcp *s = calloc(1, sizeof *s);
    int *fds = calloc((size_t)size, sizeof *fds);
    if (!s || !fds) {
        free(s);
        free(fds);
        boot_fail(&b, "out of memory");
        return GPUC_ERROR_OUT_OF_MEMORY;
    }
    for (int r = 0; r < size; r++) { fds[r] = -1; }
    int rc = 0;
    if (size > 1) {
        if (!host || !*host || !port || !*port) {
            rc = boot_fail(&b, "no address of rank 0 to meet at");
        } else {
            rc = rank == 0 ? boot_root(&b, fds) : boot_leaf(&b, &fds[0]);
        }
    }
    s->fds = fds;
    s->comm = (GpucComm){ rank, size, s, tcp_all_gather, tcp_all_reduce, tcp_barrier };
    if (rc != 0) {
        gpuc_comm_tcp_free(&s->comm);
        rt_set_last_error("%s", err);
        return GPUC_ERROR_IO;
    }
    *out = &s->comm;
    return 0;
}

void gpuc_comm_tcp_free(GpucComm *c) {
    if (!c) { return; }
    CommTcp *s = state(c);
    for (int r = 0; r < c->size; r++) {
        if (s->fds[r] >= 0) { close(s->fds[r]); }
    }
    free(s->fds);
    free(s);
}
