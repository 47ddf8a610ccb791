"""moto_server with S3's conditional writes atomic, as they are in S3; and its zygote.

S3 applies a PutObject with If-Match or If-None-Match atomically: of two writers that read
the same ETag, one succeeds and the other gets 412 (or 409 ConditionalRequestConflict)
(https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html). moto 5
checks the precondition, then writes, in separate steps of a threaded server: two
conditional PUTs of one key can both pass the check, and the second write silently replaces
the first, a lost update that S3 never makes. The hour roll-up's merge of concurrent runs
(lambdas/core/pipeline/collect.ts) relies on the rule, so the tests run moto with every
PutObject handled one at a time. Everything else is moto's own server.

Usage: python3 moto-server.py [moto_server's arguments]. CR_MOTO_SWITCH_INTERVAL (seconds)
sets Python's thread switch interval, so that a test can make threads interleave often
enough to show the race (test/integration/moto-strict.test.ts).

python3 moto-server.py --zygote SOCKET: imports moto and the services the tests call once,
then forks a server for each request on the Unix socket SOCKET (test/support/moto-zygote.ts):
a server so forked answers at once, without the seconds of CPU each fresh moto_server spends
importing itself and each service on its first call. A request is one JSON line (`args`,
moto_server's arguments; `env`, added to the server's environment; `stderr`, a file for the
server's stderr; `watch`, a pid the server exits with); the answer is one JSON line, the
server's `pid`. Each server leads a session of its own. The zygote exits with its parent.
"""
import importlib
import json
import os
import signal
import socket
import sys
import threading
import time
import traceback

from moto.s3.responses import S3Response
from moto.server import main

_one_at_a_time = threading.Lock()
_put_object = S3Response.put_object


def put_object(self):  # type: ignore[no-untyped-def]
    with _one_at_a_time:
        return _put_object(self)


S3Response.put_object = put_object  # type: ignore[method-assign]

# The services the tests and the product call on moto (and STS, which IAM's enforcement
# reads): imported by the zygote before it forks.
PRELOADED = ("s3", "sqs", "sns", "secretsmanager", "cloudformation", "iam", "sts")


def apply_env(env: dict) -> None:
    """The environment a server reads, including moto's settings read once at import."""
    os.environ.update(env)
    if "INITIAL_NO_AUTH_ACTION_COUNT" in env:
        from moto import settings

        settings.INITIAL_NO_AUTH_ACTION_COUNT = float(env["INITIAL_NO_AUTH_ACTION_COUNT"])
    if os.environ.get("CR_MOTO_SWITCH_INTERVAL"):
        sys.setswitchinterval(float(os.environ["CR_MOTO_SWITCH_INTERVAL"]))


def exit_with(pid: int) -> None:
    """Ends this process once `pid` is gone (checked every second)."""
    while True:
        time.sleep(1)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:
            pass


def serve(request: dict) -> None:
    """In the forked child: become the server the request asks for; never returns."""
    code = 1
    try:
        os.setsid()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), 2)
        apply_env(request.get("env") or {})
        # Each server its own identifiers, as a fresh process would draw.
        import random

        from moto.moto_api._internal import mock_random

        random.seed()
        mock_random.seed()
        threading.Thread(target=exit_with, args=(int(request["watch"]),), daemon=True).start()
        main(list(request["args"]))
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 0
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)


def zygote(path: str) -> None:
    from moto.backends import get_backend

    for name in PRELOADED:
        get_backend(name)  # type: ignore[call-overload]
        importlib.import_module(f"moto.{name}.urls")
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the servers
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(f"{path}.binding")
    listener.listen(16)
    os.rename(f"{path}.binding", path)  # the socket appears ready to connect
    listener.settimeout(1.0)
    while os.getppid() == parent:
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            continue
        with conn:
            try:
                conn.settimeout(10.0)
                request = json.loads(conn.makefile("r").readline())
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    conn.close()
                    serve(request)
                conn.sendall((json.dumps({"pid": pid}) + "\n").encode())
            except Exception:  # a bad request or a caller gone: the next one is served
                traceback.print_exc()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--zygote":
        zygote(sys.argv[2])
        sys.exit(0)
    apply_env({})
    sys.exit(main())
