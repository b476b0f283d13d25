# ctest-label: cli
"""scripts/peers/roe_torch.py on the CPU: its Jacobian of a generated mesh passes the check against fluxjac's reference
file, fluxjac run --reference validates on the file it writes, and its exit codes (tests/test_peers.py,
check_peer_script).

    PYTHON tests/test_peer_torch.py BUILD/fluxjac

ctest runs it with FLUXJAC_PEER_PYTHON (default /usr/bin/python3; scripts/gpu.sh check passes the GPU machine's
python3). Exits 77 (ctest: skipped), saying so, when that Python cannot import PyTorch with torch.func or
functorch (Debian 12: python3-torch, in scripts/common.sh).
"""

import sys

import test_peers

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} BUILD/fluxjac")
    test_peers.check_peer_script(sys.argv[1], "roe_torch.py")
    test_peers.finish()
