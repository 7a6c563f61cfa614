package corobench.vthreads;

import io.helidon.webserver.WebServer;
import io.helidon.webserver.WebServerConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * The java-vthreads target: Helidon SE's WebServer on $LISTEN_ADDR:$PORT, one
 * virtual thread per connection (and over HTTP/2 one more per stream), the
 * JDK's scheduler running them on `jdk.virtualThreadScheduler.parallelism`
 * carrier threads.
 */
public final class Server {
    private Server() {}

    public static void main(String[] args) {
        Map<String, String> env = System.getenv();
        String name = env.getOrDefault("TARGET_NAME", "java-vthreads");
        int port;
        int dbPool;
        String listen;
        Protocols protocols;
        try {
            listen = Contract.listenAddr(env);
            port = Contract.envInt(env, "PORT", 8080, 65_535);
            dbPool = Contract.envInt(env, "DB_POOL", 16, 1024);
            protocols = Protocols.fromEnv(env);
        } catch (IllegalArgumentException e) {
            System.err.println(name + ": " + e.getMessage());
            System.exit(2);
            return;
        }
        Database database = new Database(env.get("DATABASE_URL"), dbPool);
        Endpoints endpoints = new Endpoints(
                name,
                Path.of(env.getOrDefault("DATA_DIR", ".")),
                Path.of(env.getOrDefault("UPLOAD_DIR", System.getProperty("java.io.tmpdir"))),
                database);
        // SIGTERM runs the JVM's shutdown hooks: Helidon's stops the server,
        // this one removes the files of uploads it cut short.
        Runtime.getRuntime().addShutdownHook(new Thread(endpoints::removeUnfinishedUploads, "remove-uploads"));
        WebServerConfig.Builder listener = WebServer.builder()
                .host(listen)
                .port(port)
                // In-flight requests get this long after SIGTERM: the contract
                // wants the process gone within 5 s.
                .shutdownGracePeriod(Duration.ofMillis(500))
                .routing(endpoints::routing);
        try {
            protocols.configure(listener);
        } catch (RuntimeException e) {
            // A missing file, or PEM that is not a chain and its key.
            System.err.println(name + ": cannot serve TLS with TLS_CERT and TLS_KEY: " + e.getMessage());
            System.exit(2);
            return;
        }
        WebServer server = listener.build().start();
        if (!server.isRunning()) {
            // Helidon logs why (a port in use, say) and returns a stopped server.
            System.err.println(name + ": cannot listen on " + listen + ":" + port + "; is the port already in use?");
            System.exit(1);
        }
        System.err.println(name + ": listening on " + listen + ":" + server.port() + " (" + protocols.describe() + ") with "
                + System.getProperty("jdk.virtualThreadScheduler.parallelism", "default") + " carrier thread(s)");
    }
}
