/* rn_procs.c: processes as ranks (docs/sharding.md, docs/executables.md):
 * `prog --rank R --ranks N`, or one process of an mpirun/srun job.
 *
 * Where the rank comes from (`--rank`, or a launcher's variables), the
 * rendezvous with the other processes (runtime/gpuc_comm_tcp.c: rank 0
 * listens on $GPUC_MASTER_ADDR:$GPUC_MASTER_PORT, the others connect), one
 * call of the entry's sharded form on this process's rows, and the results
 * gathered to rank 0 over the same connections. Reading only this rank's
 * rows of each input is in rn_main.c (read_arguments) and rn_npy.c.
 */
#include "runner.h"

#include "gpuc_comm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Launchers' variables: rank, size; grep "ORDER LAUNCHERS" (docs/executables.md). */
static const struct {
  const char *rank, *size;
  bool automatic;   /* set only in the processes a launcher starts: used without --ranks-from-env */
} launchers[] = {
  {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", true},   /* Open MPI's mpirun */
  {"PMI_RANK", "PMI_SIZE", true},                           /* MPICH and Intel MPI (Hydra) */
  {"SLURM_PROCID", "SLURM_NTASKS", false},                  /* srun (also set in sbatch scripts) */
};
/* The process's index among the ranks on its host: which GPU it takes. */
static const char *const local_vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"};

static int env_int(const char *name, long max, long *out, char *err, size_t errlen)
{
  const char *s = getenv(name);
  if (!s) {
    return 0;
  }
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end != '\0' || v < 0 || v > max) {
    snprintf(err, errlen, "%s: expected a number from 0 to %ld, found '%s'", name, max, s);
    return -1;
  }
  *out = v;
  return 1;
}

int rn_procs_local_rank(char *err, size_t errlen)
{
  for (size_t i = 0; i < sizeof local_vars / sizeof *local_vars; i++) {
    long v;
    int rc = env_int(local_vars[i], 1 << 20, &v, err, errlen);
    if (rc != 0) {
      return rc < 0 ? -2 : (int)v;
    }
  }
  return -1;
}

int rn_procs_from_env(bool required, int *rank, int *size, const char **var, char *err, size_t errlen)
{
  const char *off = getenv("GPUC_RANKS_FROM_ENV");
  if (!required && off && strcmp(off, "0") == 0) {
    return 0;
  }
  for (size_t i = 0; i < sizeof launchers / sizeof *launchers; i++) {
    long r = -1, n = -1;
    int rc1 = env_int(launchers[i].rank, 1 << 20, &r, err, errlen);
    int rc2 = rc1 < 0 ? 0 : env_int(launchers[i].size, 1 << 20, &n, err, errlen);
    if (rc1 < 0 || rc2 < 0) {
      return -1;
    }
    if (rc1 == 0 || rc2 == 0 || (!required && (!launchers[i].automatic || n < 2))) {
      continue;
    }
    if (n < 1 || r >= n) {
      snprintf(err, errlen, "%s=%ld is not a rank of %s=%ld", launchers[i].rank, r, launchers[i].size, n);
      return -1;
    }
    *rank = (int)r;
    *size = (int)n;
    *var = launchers[i].rank;
    return 1;
  }
  if (required) {
    snprintf(err, errlen, "--ranks-from-env: none of the launchers' variables is set (OMPI_COMM_WORLD_RANK and "
                          "OMPI_COMM_WORLD_SIZE, PMI_RANK and PMI_SIZE, SLURM_PROCID and SLURM_NTASKS)");
    return -1;
  }
  return 0;
}

GpucComm *rn_procs_connect(int rank, int size, char *err, size_t errlen)
{
  const char *addr = getenv("GPUC_MASTER_ADDR"), *port = getenv("GPUC_MASTER_PORT");
  const char *port_var = "GPUC_MASTER_PORT";
  if (!addr || !*addr) {
    addr = getenv("MASTER_ADDR");
  }
  if (!port || !*port) {
    port = getenv("MASTER_PORT");
    port_var = "MASTER_PORT";
  }
  GpucComm *comm = NULL;
  if (size > 1 && (!addr || !*addr || !port || !*port)) {
    snprintf(err, errlen,
             "rank %d of %d: no address to meet rank 0 at: %s is not set (set GPUC_MASTER_ADDR and GPUC_MASTER_PORT, "
             "or MASTER_ADDR and MASTER_PORT, to rank 0's host and a free port)",
             rank, size, !addr || !*addr ? "GPUC_MASTER_ADDR" : "GPUC_MASTER_PORT");
    return NULL;
  }
  if (size > 1) {
    char *end;
    errno = 0;
    long p = strtol(port, &end, 10);
    if (errno || end == port || *end != '\0' || p < 1 || p > 65535) {
      snprintf(err, errlen, "rank %d of %d: %s: expected a port number from 1 to 65535, found '%s'", rank, size,
               port_var, port);
      return NULL;
    }
  }
  double timeout = 60;
  const char *t = getenv("GPUC_BOOTSTRAP_TIMEOUT");
  if (t) {
    char *end;
    errno = 0;
    timeout = strtod(t, &end);
    if (errno || end == t || *end != '\0' || !(timeout > 0) || timeout > 1e6) {
      snprintf(err, errlen, "GPUC_BOOTSTRAP_TIMEOUT: expected a positive number of seconds, found '%s'", t);
      return NULL;
    }
  }
  if (gpuc_comm_tcp_new(addr, port, rank, size, timeout, &comm, err, errlen) != 0) {
    return NULL;
  }
  return comm;
}

/* The results: rank 0 gets the unsharded values (split ones gathered in
 * rank order: an all_gather of the row counts, then the bytes to rank 0);
 * the others, and every rank's unsplit results, keep their own. */
static int gather_results(const GpucComm *tcp, const GpucShardInfo *info, int nres, GpucValue *mine,
                          GpucValue *results, char *err, size_t errlen)
{
  int64_t *each = calloc((size_t)tcp->size, sizeof *each);
  if (!each) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  int rc = 0;
  for (int i = 0; i < nres && rc == 0; i++) {
    GpucValue *m = &mine[i];
    if (m->rank >= 1 && info->results_split[i]) {
      int64_t local = m->shape[0], rows = 0;
      size_t bytes = (size_t)gpuc_value_count(m) * gpuc_kind_size(m->kind), got = 0;
      void *all = NULL;
      if (tcp->all_gather(tcp, &local, each, sizeof local, NULL) != 0 ||
          gpuc_comm_tcp_gather(tcp, m->data, bytes, &all, &got) != 0) {
        snprintf(err, errlen, "gathering the result '%d': %s", i, gpuc_comm_tcp_error(tcp));
        rc = -1;
        break;
      }
      if (tcp->rank == 0) {
        for (int r = 0; r < tcp->size; r++) {
          rows += each[r];
        }
        if (got != (size_t)(rows * rn_row_len(m)) * gpuc_kind_size(m->kind)) {
          snprintf(err, errlen, "the ranks' parts of result %d have other row lengths than rank 0's", i);
          rc = -1;
        } else if (rn_value_shaped(&results[i], rows, rn_row_len(m)) != 0) {
          snprintf(err, errlen, "out of memory for the result");
          rc = -1;
        } else if (got) {
          memcpy(results[i].data, all, got);
        }
        free(all);
        continue;
      }
    }
    free(results[i].data);
    results[i] = *m;   /* moved: mine[i] no longer owns it */
    m->data = NULL;
  }
  free(each);
  return rc;
}

int rn_run_procs(const RnProcRun *p, const GpucShardInfo *info, int nargs, const GpucValue *args, int nres,
                 GpucValue *results, double *us, char *err, size_t errlen)
{
  (void)nargs;
  GpucValue *mine = calloc((size_t)nres + 1, sizeof *mine);
  if (!mine) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  int rc = 0;
  for (int i = 0; i < nres && rc == 0; i++) {
    mine[i].kind = results[i].kind;
    mine[i].rank = results[i].rank;
    if (mine[i].rank == 0 && gpuc_value_alloc(&mine[i]) != 0) {
      snprintf(err, errlen, "out of memory for the results");
      rc = -1;
    }
  }
  double t = 0;
  if (rc == 0 && p->ctx) {
    GpucRun run = {p->start, p->end, false, false, p->ctx, false, 0, NULL, false};
    gpuc_event_record(run.start, NULL);
    rc = info->run_cuda(p->nccl, p->ctx, p->module, &run, args, mine, err, errlen);
    if (!run.ended) {
      gpuc_event_record(run.end, NULL);
    }
    float ms = 0;
    if (rc == 0 && gpuc_event_elapsed_ms(run.start, run.end, &ms) != GPUC_SUCCESS) {
      const char *msg = gpuc_context_error(p->ctx);
      snprintf(err, errlen, "timing failed: %s", msg ? msg : gpuc_last_error());
      rc = -1;
    }
    t = (double)ms * 1e3;
  } else if (rc == 0) {
    double t0 = rn_now_us();
    rc = info->run(p->tcp, args, mine, err, errlen);
    t = rn_now_us() - t0;
  }
  const char *why = gpuc_comm_tcp_error(p->tcp);
  if (rc != 0 && why) {
    size_t n = strlen(err);
    snprintf(err + n, errlen - n, " (%s)", why);
  }
  /* every rank times; the slowest rank's time is the run's */
  if (rc == 0 && p->tcp->all_reduce(p->tcp, &t, us, 1, GPUC_COMM_F64, GPUC_COMM_MAX, NULL) != 0) {
    snprintf(err, errlen, "%s", gpuc_comm_tcp_error(p->tcp));
    rc = -1;
  }
  if (rc == 0) {
    rc = gather_results(p->tcp, info, nres, mine, results, err, errlen);
  }
  rn_values_free(mine, nres);
  free(mine);
  return rc;
}
