package dev.lease.samples.reactive;

import static dev.lease.testing.TestTiming.seconds;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** The test's handle on a {@link PausedReactiveHolder} child JVM: started, paused and resumed for real. */
final class PausedHolderProcess implements AutoCloseable {

    private final Process process;
    /** Every line the child printed so far, in order. */
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Writer stdin;

    private PausedHolderProcess(Process process) {
        this.process = process;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(this::read, "paused-holder-output");
        reader.setDaemon(true);
        reader.start();
    }

    static PausedHolderProcess start(String zooKeeper, int postgresPort, long invoice) throws IOException {
        // Surefire's manifest-only jar leaves java.class.path pointing at its booter; it publishes the real one.
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        return new PausedHolderProcess(new ProcessBuilder(List.of(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
                classpath, PausedReactiveHolder.class.getName(), zooKeeper, String.valueOf(postgresPort),
                String.valueOf(invoice))).redirectErrorStream(true).start());
    }

    long awaitToken() throws InterruptedException {
        String ready = awaitLine(line -> line.startsWith("READY token="));
        return Long.parseLong(ready.substring("READY token=".length()));
    }

    void pause() throws IOException, InterruptedException {
        kill("-STOP");
    }

    void resumeAndWrite() throws IOException, InterruptedException {
        kill("-CONT");
        stdin.write("WRITE\n");
        stdin.flush();
    }

    /** The first line the child printed, or prints within a minute, that matches; its log lines are skipped. */
    String awaitLine(Predicate<String> wanted) throws InterruptedException {
        long deadline = System.nanoTime() + seconds(60).toNanos();
        do {
            Optional<String> found = lines.stream().filter(wanted).findFirst();
            if (found.isPresent()) {
                return found.get();
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
        while (System.nanoTime() - deadline < 0 && process.isAlive());
        throw new IllegalStateException("the paused holder printed no matching line within " + seconds(60)
                + (process.isAlive() ? "" : " (it exited)"));
    }

    private void kill(String signal) throws IOException, InterruptedException {
        int exit = new ProcessBuilder("kill", signal, String.valueOf(process.pid())).inheritIO().start().waitFor();
        if (exit != 0) {
            throw new IOException("kill " + signal + " " + process.pid() + " exited with " + exit);
        }
    }

    private void read() {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                System.out.println("[paused holder] " + line);
                lines.add(line.trim());
            }
        }
        catch (IOException ended) {
            // The child exited.
        }
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
