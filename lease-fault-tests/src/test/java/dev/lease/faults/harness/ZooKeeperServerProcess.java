package dev.lease.faults.harness;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.springframework.util.FileSystemUtils;

import dev.lease.testing.TestTiming;

/**
 * A standalone ZooKeeper server in a JVM of its own ({@code ZooKeeperServerMain} from the test classpath), on a
 * fixed port and data directory, so that {@link #kill()} is a real {@code kill -9}: no session is closed, nothing is
 * flushed that was not already written, and {@link #start()} recovers from the snapshot and transaction log, the
 * way a crashed server comes back. Its output goes to {@code target/fault-logs/zookeeper-server-<port>.log}.
 */
public final class ZooKeeperServerProcess implements AutoCloseable {

    private final Path dataDirectory;
    private final int port;
    private final int tickMillis;
    private volatile Process process;

    private ZooKeeperServerProcess(Path dataDirectory, int port, int tickMillis) {
        this.dataDirectory = dataDirectory;
        this.port = port;
        this.tickMillis = tickMillis;
    }

    /** Starts a server whose sessions may last from 2 to 20 ticks (ZooKeeper's defaults for those bounds). */
    public static ZooKeeperServerProcess start(int tickMillis) throws IOException, InterruptedException {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        ZooKeeperServerProcess server = new ZooKeeperServerProcess(Files.createTempDirectory("lease-zk"), port,
                tickMillis);
        server.start();
        return server;
    }

    public int port() {
        return port;
    }

    String connectString() {
        return "127.0.0.1:" + port;
    }

    /** Starts the server (again) and waits until it serves. */
    public synchronized void start() throws IOException, InterruptedException {
        Path log = Path.of("target", "fault-logs", "zookeeper-server-" + port + ".log");
        Files.createDirectories(log.getParent());
        List<String> command = List.of(ChildHolder.javaBinary(), "-Xmx128m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-Dzookeeper.admin.enableServer=false",
                "-Dzookeeper.4lw.commands.whitelist=ruok", "-cp", ChildHolder.testClasspath(),
                "org.apache.zookeeper.server.ZooKeeperServerMain", Integer.toString(port), dataDirectory.toString(),
                Integer.toString(tickMillis));
        process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        long deadline = System.nanoTime() + TestTiming.seconds(60).toNanos();
        while (!"imok".equals(ask("ruok"))) {
            if (!process.isAlive()) {
                throw new IllegalStateException("ZooKeeper exited with " + process.exitValue() + "; see " + log);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("ZooKeeper did not serve within the bound; see " + log);
            }
            Thread.sleep(50);
        }
    }

    /** SIGKILL, and waits until the process is gone. */
    public synchronized void kill() throws InterruptedException {
        process.destroyForcibly().waitFor(TestTiming.seconds(30).toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The process id, for {@code kill -STOP}. */
    long pid() {
        return process.pid();
    }

    private String ask(String word) {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(2000);
            OutputStream out = socket.getOutputStream();
            out.write(word.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
        }
        catch (IOException ex) {
            return "";
        }
    }

    @Override
    public synchronized void close() throws InterruptedException {
        if (process != null) {
            process.destroy();
            if (!process.waitFor(TestTiming.seconds(30).toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
            }
        }
        FileSystemUtils.deleteRecursively(dataDirectory.toFile());
    }
}
