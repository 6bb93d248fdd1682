#!/usr/bin/env bash
# Runs the kv-tracker JMH benchmarks and the heap-per-block harness (a few minutes).
# Usage, from anywhere:  kv-tracker/bench.sh [benchmark regex]
# Benchmarks live in src/test/java/io/kvrouter/tracker/bench; they never run during mvn verify.
# BENCH_OPTS: JVM options of the runner, e.g. "-Dbench.iterations=10 -Dbench.skipHeap=true"
# (-Dbench.warmups=N too); JMH forks with the same heap settings.
# BENCH_MAIN: another main class, e.g. io.kvrouter.tracker.bench.EventPlaneScale (the event plane at
# 64/256/1,024 replicas on one thread; args: replica counts, e.g. 64,256,1024).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
mvn -B -q -pl kv-tracker -am test-compile \
  org.apache.maven.plugins:maven-dependency-plugin:2.8:build-classpath \
  -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test
exec java -Xmx4g -XX:+UseParallelGC ${BENCH_OPTS:-} \
  -cp "$here/target/test-classes:$here/target/classes:$(cat "$here/target/bench.classpath")" \
  "${BENCH_MAIN:-io.kvrouter.tracker.bench.BenchMain}" "$@"
