package dev.lease.faults.scenarios.kafka;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.lease.faults.harness.ChildHolder;
import dev.lease.faults.harness.Signals;

/**
 * The parent's handle on a {@link KafkaHolderMain} child JVM, started as {@link ChildHolder} starts its holders (this
 * JVM's java binary, the test classpath): its event lines in order, {@code kill -STOP} / {@code -CONT}, {@code go} on
 * its stdin. Its whole output goes to {@code target/fault-logs/<name>.log}.
 */
final class KafkaChild implements AutoCloseable {

    private final String name;
    private final Process process;
    private final PrintWriter stdin;
    private final BlockingQueue<String[]> events = new LinkedBlockingQueue<>();
    /** Every event line so far, for the message of a wait that timed out. */
    private final List<String> seen = java.util.Collections.synchronizedList(new ArrayList<>());
    private final Thread reader;
    private boolean paused;

    private KafkaChild(String name, Process process) {
        this.name = name;
        this.process = process;
        this.stdin = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        this.reader = new Thread(this::readLoop, "kafka-child-" + name);
        this.reader.setDaemon(true);
    }

    static KafkaChild start(String name, Map<String, String> args) throws IOException {
        List<String> command = new ArrayList<>(List.of(ChildHolder.javaBinary(), "-Xmx128m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-cp", ChildHolder.testClasspath(), KafkaHolderMain.class.getName()));
        args.forEach((k, v) -> command.add(k + "=" + v));
        KafkaChild child = new KafkaChild(name, new ProcessBuilder(command).redirectErrorStream(true).start());
        child.reader.start();
        return child;
    }

    /**
     * Waits for the next event line of {@code kind}, skipping others, and returns its fields after the kind.
     *
     * @throws AssertionError when none comes within {@code bound} (a scenario's expectation not met)
     */
    String[] await(String kind, Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (true) {
            String[] event = events.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (event == null) {
                throw new AssertionError("child " + name + " never said " + kind + " within " + bound + "; it said "
                        + seen + "; see " + logFile());
            }
            if (event[0].equals(kind)) {
                return java.util.Arrays.copyOfRange(event, 1, event.length);
            }
        }
    }

    void pause() throws IOException, InterruptedException {
        Signals.send(process.pid(), "STOP");
        paused = true;
    }

    void resume() throws IOException, InterruptedException {
        Signals.send(process.pid(), "CONT");
        paused = false;
    }

    void go() {
        stdin.println("go");
    }

    /** Waits for the child to say BYE and exit (it does once its section ended); kills it past {@code bound}. */
    void awaitExit(Duration bound) throws InterruptedException, IOException {
        if (paused) {
            resume();
        }
        await("BYE", bound);
        if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("child " + name + " said BYE and did not exit; see " + logFile());
        }
    }

    /** Kills a child still running (a failed scenario): no child outlives the test. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        reader.join(TimeUnit.SECONDS.toMillis(10));
    }

    private Path logFile() {
        return Path.of("target", "fault-logs", name + ".log");
    }

    private void readLoop() {
        try {
            Files.createDirectories(logFile().getParent());
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8)); Writer log = Files.newBufferedWriter(logFile())) {
                String line;
                while ((line = in.readLine()) != null) {
                    log.write(line);
                    log.write('\n');
                    log.flush();
                    int at = line.indexOf(KafkaHolderMain.PREFIX);
                    if (at >= 0) {
                        String event = line.substring(at + KafkaHolderMain.PREFIX.length());
                        seen.add(event);
                        events.add(event.split(" "));
                    }
                }
            }
        }
        catch (IOException ex) {
            events.add(new String[] { "BROKEN", ex.toString() });
        }
    }
}
