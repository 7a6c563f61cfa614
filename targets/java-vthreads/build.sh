#!/bin/sh
# Builds the server into $1 (corobench's build cache): server.jar, its
# dependencies in lib/, and `java`, a link to the JDK it was built with, so a
# run uses the same JDK. Maven downloads into its usual local repository.
set -eu
out=$1
jdk=$(./jdk.sh)
work=$out/maven
mkdir -p "$work"
cp -R pom.xml src "$work"/
(cd "$work" && JAVA_HOME=$jdk mvn -B -q --no-transfer-progress -DskipTests package)
mv "$work/target/server.jar" "$work/target/lib" "$out"/
rm -rf "$work"
ln -s "$jdk/bin/java" "$out/java"
