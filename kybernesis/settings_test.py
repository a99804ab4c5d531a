"""Settings for the test suite: the production settings with a fixed secret key, fast password
hashing and tasks run synchronously in the test process. Importing it writes nothing and starts
nothing; the embedded database starts on the first connection (kybernesis.embedded)."""

from kybernesis.settings import *  # noqa: F403
from kybernesis.settings import Q_CLUSTER

SECRET_KEY = "kybernesis-tests-only-not-secret"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
Q_CLUSTER = {**Q_CLUSTER, "sync": True}
# The suite sends hundreds of requests a minute from one address; tests of the limits set their own.
KYBERNESIS_API_RATE = ""
KYBERNESIS_API_ADDRESS_RATE = ""
KYBERNESIS_API_AUTH_FAILURE_RATE = ""
KYBERNESIS_TASK_RUNS = False  # tests of the task-run log turn it on
# Every test client builds a new request handler; without autorefresh WhiteNoise would list all ~200
# static files each time (a sixth of the fast set's time). With it a file is looked up when asked for.
WHITENOISE_AUTOREFRESH = True
