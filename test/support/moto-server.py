"""moto_server with S3's conditional writes atomic, as they are in S3.

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
"""
import os
import sys
import threading

from moto.s3.responses import S3Response
from moto.server import main

_one_at_a_time = threading.Lock()
_put_object = S3Response.put_object


def put_object(self):  # type: ignore[no-untyped-def]
    with _one_at_a_time:
        return _put_object(self)


S3Response.put_object = put_object  # type: ignore[method-assign]

if __name__ == "__main__":
    if os.environ.get("CR_MOTO_SWITCH_INTERVAL"):
        sys.setswitchinterval(float(os.environ["CR_MOTO_SWITCH_INTERVAL"]))
    sys.exit(main())
