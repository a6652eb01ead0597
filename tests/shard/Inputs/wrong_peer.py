"""wrong_peer.py PROG ARG...: the bootstrap of processes as ranks
(runtime/gpuc_comm_tcp.c) against peers that are not gpuc ranks, for
tests/shard/procs.test. Runs PROG ARG... as rank 1 of 2 against a server
that answers like a web server, then as rank 0 of 2 receiving a client that
sends an HTTP request, then a rank 1 of 3 meeting a rank 0 of 2; prints each
case's name, exit status and standard error."""
import os, socket, subprocess, sys, threading, time

prog = sys.argv[1:]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run(name, extra, port, stdin=b""):
    env = dict(os.environ, GPUC_MASTER_ADDR="127.0.0.1", GPUC_MASTER_PORT=str(port), GPUC_BOOTSTRAP_TIMEOUT="10")
    return subprocess.Popen(prog + extra, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE), name


def report(p, name):
    _, err = p.communicate(timeout=30)
    print(f"{name}: exit {p.returncode}: {err.decode().strip()}")


# a server that is not rank 0
port = free_port()
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(1)
p, name = run("web server", ["--rank", "1", "--ranks", "2"], port)
conn, _ = srv.accept()
conn.recv(24)
conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
conn.close()
srv.close()
report(p, name)

# a client that is not a rank
port = free_port()
p, name = run("http client", ["--rank", "0", "--ranks", "2"], port)
for _ in range(100):
    try:
        c = socket.create_connection(("127.0.0.1", port))
        break
    except OSError:
        time.sleep(0.05)
c.sendall(b"GET / HTTP/1.0\r\n\r\n" + b"x" * 8)
report(p, name)
c.close()

# ranks that disagree on the number of ranks
port = free_port()
p0, name0 = run("rank 0 of 2", ["--rank", "0", "--ranks", "2"], port)
time.sleep(0.3)
p1, name1 = run("rank 1 of 3", ["--rank", "1", "--ranks", "3"], port)
report(p0, name0)
report(p1, name1)
