"""A browser for the OAuth tests: given an authorization URL (as $BROWSER is), notes that it was
opened in OPENED (an environment variable naming a file), then GETs the URL and follows the
redirects, to the proxy's loopback listener, as a person's browser would after they approved."""

import os
import sys
import urllib.request

with open(os.environ["OPENED"], "a") as out:
    out.write(sys.argv[1] + "\n")
with urllib.request.urlopen(sys.argv[1], timeout=30) as answer:
    answer.read()
