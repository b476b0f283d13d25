# ctest-label: cli
"""scripts/peers/roe_jax.py on the CPU: its Jacobian of a generated mesh passes the check against fluxjac's reference
file, fluxjac run --reference validates on the file it writes, and its exit codes (tests/test_peers.py,
check_peer_script).

    PYTHON tests/test_peer_jax.py BUILD/fluxjac

ctest runs it with FLUXJAC_PEER_PYTHON (default /usr/bin/python3; scripts/gpu.sh check passes the GPU machine's
python3). Exits 77 (ctest: skipped), saying so, when that Python cannot import JAX (not a Debian package: it runs where
JAX is installed, as on the GPU machines).
"""

import sys

import test_peers

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} BUILD/fluxjac")
    test_peers.check_peer_script(sys.argv[1], "roe_jax.py")
    test_peers.finish()
