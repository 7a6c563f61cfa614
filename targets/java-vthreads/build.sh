#!/bin/sh
# Builds the server into $1 (corobench's build cache): server.jar, its
# dependencies in lib/, app.aot (the JDK's ahead-of-time cache, from a
# training run) and `java`, a launcher for the JDK it was built with that
# starts from app.aot, so a run uses the same JDK and starts warmer. Maven
# downloads into its usual local repository.
set -eu
out=$1
jdk=$(sh jdk.sh)
feature=$(sh jdk.sh --feature)
work=$out/maven
mkdir -p "$work"
cp -R pom.xml src "$work"/
(cd "$work" && JAVA_HOME=$jdk mvn -B -q --no-transfer-progress -DskipTests package)
mv "$work/target/server.jar" "$work/target/lib" "$out"/
rm -rf "$work"

# The launcher. `{out}` is a temporary folder while this runs and is renamed
# afterwards, so the launcher finds app.aot beside itself at run time.
launcher() { # $1: extra JVM options, already quoted for sh
    printf '#!/bin/sh\n# Written by build.sh: the JDK the server was built with.\nexec %s %s"$@"\n' \
        "'$jdk/bin/java'" "$1" >"$out/java"
    chmod +x "$out/java"
}

# -XX:AOTCacheOutput (a training run that writes the cache as the JVM exits)
# is JDK 25's (JEP 514); JDK 25 also keeps the training's method profiles in
# the cache (JEP 515), which is what shortens the JIT's warm-up.
if [ "$feature" -lt 25 ]; then
    echo "build.sh: JDK $feature cannot train an AOT cache (-XX:AOTCacheOutput needs JDK 25):" \
        "building without one; the JVM starts cold and warms up more slowly than README.md measured" >&2
    launcher ''
    exit 0
fi

# The training run: the server with the [run] defaults of target.toml (keep
# them in step), loaded on the endpoints the suites measure. /db is left out:
# no database runs at build time, and training on its 503 would teach the
# JIT an error path.
train=$out/training
mkdir -p "$train/classes" "$train/upload"
"$jdk/bin/javac" -d "$train/classes" aot/Train.java
port=$("$jdk/bin/java" -cp "$train/classes" Train free-port)

server_pid=
stop_server() { # SIGTERM lets the JVM exit normally, which writes the cache
    [ -n "$server_pid" ] || return 0
    kill -TERM "$server_pid" 2>/dev/null || true
    # The JVM assembles the cache in a child process before it exits: allow
    # it two minutes, then give up on it.
    waited=0
    while kill -0 "$server_pid" 2>/dev/null && [ "$waited" -lt 1200 ]; do
        sleep 0.1; waited=$((waited + 1))
    done
    kill -KILL "$server_pid" 2>/dev/null || true
    status=0
    wait "$server_pid" || status=$?
    server_pid=
}
trap stop_server EXIT

PORT=$port TARGET_NAME=java-vthreads DATA_DIR=$train UPLOAD_DIR=$train/upload \
    "$jdk/bin/java" -XX:AOTCacheOutput="$out/app.aot" \
    -XX:+UseSerialGC -Xms256m -Xmx256m -XX:+AlwaysPreTouch \
    -Djdk.virtualThreadScheduler.parallelism=1 \
    -cp "$out/server.jar:$out/lib/*" corobench.vthreads.Server >"$train/server.log" 2>&1 &
server_pid=$!

if ! "$jdk/bin/java" -cp "$train/classes" Train "$port" "$server_pid" 4 64 /plaintext /json '/io?ms=1'; then
    stop_server
    echo "build.sh: the AOT training run failed; the server's log:" >&2
    tail -n 30 "$train/server.log" >&2
    exit 1
fi
stop_server
# 143 is the JVM's exit status for SIGTERM after its shutdown hooks ran.
if [ "$status" -ne 143 ] || [ ! -s "$out/app.aot" ]; then
    echo "build.sh: the training server exited with status $status without writing app.aot; its log:" >&2
    tail -n 30 "$train/server.log" >&2
    exit 1
fi
rm -rf "$train"
launcher '-XX:AOTCache="${0%/*}/app.aot" '
