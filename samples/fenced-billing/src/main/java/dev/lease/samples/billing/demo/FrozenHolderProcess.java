package dev.lease.samples.billing.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The parent's handle on a {@link FrozenHolder} child JVM: starts it with this JVM's java command and class path,
 * reads its protocol lines (everything else it prints goes to a log file), and stops and resumes it with
 * {@code kill -STOP} / {@code kill -CONT}.
 */
final class FrozenHolderProcess implements AutoCloseable {

    private final Process process;
    private final PrintWriter stdin;
    private final BlockingQueue<String> protocol = new LinkedBlockingQueue<>();

    private FrozenHolderProcess(Process process, Path log) throws IOException {
        this.process = process;
        this.stdin = new PrintWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), true);
        Writer logFile = Files.newBufferedWriter(log, StandardCharsets.UTF_8);
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)); logFile) {
                String line;
                while ((line = out.readLine()) != null) {
                    logFile.write(line + System.lineSeparator());
                    logFile.flush();
                    if (line.matches("(READY|ACCEPTED|REJECTED|FAILED)\\b.*")) {
                        protocol.add(line);
                    }
                }
            }
            catch (IOException ex) {
                protocol.add("FAILED reading the child's output: " + ex);
            }
            protocol.add("EXITED");
        }, "frozen-holder-output");
        reader.setDaemon(true);
        reader.start();
    }

    /** Whether this OS can stop and resume a process with {@code kill}. */
    static boolean supported() {
        return !System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows");
    }

    /** Starts a child JVM running {@link FrozenHolder} with these application arguments. */
    static FrozenHolderProcess start(List<String> applicationArgs, Path log) throws IOException {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-Xss512k",
                "-cp", System.getProperty("java.class.path"), FrozenHolder.class.getName()));
        command.addAll(applicationArgs);
        Files.createDirectories(log.toAbsolutePath().getParent());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        return new FrozenHolderProcess(process, log);
    }

    long pid() {
        return process.pid();
    }

    /** The next protocol line, such as {@code READY token=3}. */
    String next(Duration max, String what) throws InterruptedException, TimeoutException {
        String line = protocol.poll(max.toMillis(), TimeUnit.MILLISECONDS);
        if (line == null) {
            throw new TimeoutException("The frozen holder (pid " + pid() + ") did not say " + what + " within " + max);
        }
        return line;
    }

    /** Freezes the whole JVM: every thread, ZooKeeper heartbeats included. */
    void stop() throws IOException, InterruptedException {
        kill("-STOP");
    }

    /** Tells it to write, then lets it run again; the command waits in the pipe while it is stopped. */
    void resumeAndWrite() throws IOException, InterruptedException {
        stdin.println("WRITE");
        kill("-CONT");
    }

    int awaitExit(Duration max) throws InterruptedException, TimeoutException {
        if (!process.waitFor(max.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new TimeoutException("The frozen holder (pid " + pid() + ") did not exit within " + max);
        }
        return process.exitValue();
    }

    private void kill(String signal) throws IOException, InterruptedException {
        int exit = new ProcessBuilder("kill", signal, String.valueOf(pid())).inheritIO().start().waitFor();
        if (exit != 0) {
            throw new IOException("kill " + signal + " " + pid() + " exited with " + exit);
        }
    }

    /** Kills the child if it is still there (SIGKILL works on a stopped process too). */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
        stdin.close();
    }

    static long parse(String line, String key) {
        for (String part : line.split(" ")) {
            if (part.startsWith(key + "=")) {
                return Long.parseLong(part.substring(key.length() + 1));
            }
        }
        throw new IllegalArgumentException("No " + key + " in '" + line + "'");
    }
}
