# tests/free_port.sh: free_port, sourced by the tests that start servers
# (tests/telemetry/test_prometheus.sh, tests/slurm/test_monitoring.sh).
# A free port below the kernel's ephemeral range (32768+), so no outgoing
# connection (a scrape, a probe) can take it between this check and the
# server's bind; also clear of the Slurm test clusters' ports (26817 up).
free_port() {
	python3 -c '
import random, socket
for _ in range(200):
    p = random.randint(20000, 26700)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break
'
}
