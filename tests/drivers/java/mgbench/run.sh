#!/usr/bin/env bash
# Runs Mgbench.java (mgBench through the official Java driver) with the driver's classpath from
# ../pom.xml (resolved once by Maven into target/mgbench.classpath). Flags: see Mgbench.java.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cp_file="$here/../target/mgbench.classpath"
if [ ! -s "$cp_file" ]; then
  mkdir -p "$here/../target"
  (cd "$here/.." && mvn -q org.apache.maven.plugins:maven-dependency-plugin:3.11.0:build-classpath \
    -Dmdep.outputFile="$cp_file" -Dmdep.includeScope=test)
fi
exec java -cp "$(cat "$cp_file")" "$here/Mgbench.java" "$@"
