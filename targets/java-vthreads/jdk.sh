#!/bin/sh
# Prints the home of a JDK 21 or newer (virtual threads are final from 21):
# $JAVA_HOME when it is one, else the newest under /usr/lib/jvm, else the one
# `javac` on PATH belongs to. Exits 1, saying so, when there is none.
#   jdk.sh            the JDK's home
#   jdk.sh --version  its `java -version` line
#   jdk.sh --feature  its feature release (21, 25...)
set -eu

feature() { # the feature release (17, 21, 25...) of the JDK at $1, or 0
    [ -x "$1/bin/javac" ] && [ -x "$1/bin/java" ] || { echo 0; return; }
    "$1/bin/java" -XshowSettings:properties -version 2>&1 |
        sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n1
}

best= best_feature=0
for home in ${JAVA_HOME:-} /usr/lib/jvm/* \
    "$(dirname "$(dirname "$(readlink -f "$(command -v javac 2>/dev/null || echo /nonexistent)")")")"; do
    [ -d "$home" ] || continue
    f=$(feature "$home"); f=${f:-0}
    if [ "$f" -gt "$best_feature" ]; then best=$home best_feature=$f; fi
done

if [ "$best_feature" -lt 21 ]; then
    echo "no JDK 21 or newer found (looked at \$JAVA_HOME, /usr/lib/jvm and javac on PATH)" >&2
    exit 1
fi
if [ "${1:-}" = --version ]; then
    "$best/bin/java" -version 2>&1 | head -n1
elif [ "${1:-}" = --feature ]; then
    echo "$best_feature"
else
    echo "$best"
fi
