package dev.lease.testing;

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
import java.util.regex.Pattern;

/**
 * A child JVM running a main class of this JVM's class path, for pausing a lease holder for real: {@link #stop()}
 * sends {@code kill -STOP} (every thread frozen, heartbeats and timers included), {@link #resume()} {@code kill -CONT}.
 * The child talks a line protocol: lines it prints that match the protocol pattern are queued for {@link #next};
 * everything it prints goes to a log file. {@link #send} writes a line to its stdin, which waits in the pipe while
 * the child is stopped.
 */
public final class StoppableJvm implements AutoCloseable {

    private final Process process;
    private final PrintWriter stdin;
    private final BlockingQueue<String> protocol = new LinkedBlockingQueue<>();

    private StoppableJvm(Process process, Writer log, Pattern protocolLines) {
        this.process = process;
        this.stdin = new PrintWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), true);
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)); log) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    log.write(line + System.lineSeparator());
                    log.flush();
                    if (protocolLines.matcher(line).matches()) {
                        protocol.add(line);
                    }
                }
            }
            catch (IOException ex) {
                protocol.add("FAILED reading the child's output: " + ex);
            }
            protocol.add("EXITED");
        }, "stoppable-jvm-output");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Whether this OS can stop and resume a process with {@code kill}.
     *
     * @return false on Windows
     */
    public static boolean supported() {
        return !System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows");
    }

    /**
     * Starts {@code mainClass} in a new JVM with this JVM's java command and class path.
     *
     * @param mainClass the class whose {@code main} runs
     * @param args its arguments
     * @param log where everything the child prints goes
     * @param protocolLines the lines {@link #next} returns, such as {@code (READY|DONE)\b.*}
     * @return the running child, to close
     * @throws IOException when it cannot be started
     */
    public static StoppableJvm start(Class<?> mainClass, List<String> args, Path log, Pattern protocolLines)
            throws IOException {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-Xss512k",
                "-cp", System.getProperty("java.class.path"), mainClass.getName()));
        command.addAll(args);
        Files.createDirectories(log.toAbsolutePath().getParent());
        Writer logFile = Files.newBufferedWriter(log, StandardCharsets.UTF_8);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        return new StoppableJvm(process, logFile, protocolLines);
    }

    /**
     * The child's process id.
     *
     * @return its pid
     */
    public long pid() {
        return process.pid();
    }

    /**
     * The next protocol line; {@code EXITED} once the child's output ended.
     *
     * @param max how long to wait
     * @param what what is awaited, for the timeout's message
     * @return the line
     * @throws InterruptedException when interrupted while waiting
     * @throws TimeoutException when no line came within {@code max}
     */
    public String next(Duration max, String what) throws InterruptedException, TimeoutException {
        String line = protocol.poll(max.toMillis(), TimeUnit.MILLISECONDS);
        if (line == null) {
            throw new TimeoutException("The child JVM (pid " + pid() + ") did not say " + what + " within " + max);
        }
        return line;
    }

    /**
     * Writes a line to the child's stdin.
     *
     * @param line the line
     */
    public void send(String line) {
        stdin.println(line);
    }

    /**
     * Freezes the whole JVM ({@code kill -STOP}).
     *
     * @throws IOException when {@code kill} fails
     * @throws InterruptedException when interrupted while it runs
     */
    public void stop() throws IOException, InterruptedException {
        kill("-STOP");
    }

    /**
     * Lets it run again ({@code kill -CONT}).
     *
     * @throws IOException when {@code kill} fails
     * @throws InterruptedException when interrupted while it runs
     */
    public void resume() throws IOException, InterruptedException {
        kill("-CONT");
    }

    /**
     * Waits for the child to exit.
     *
     * @param max how long to wait
     * @return its exit code
     * @throws InterruptedException when interrupted while waiting
     * @throws TimeoutException when it is still running after {@code max}
     */
    public int awaitExit(Duration max) throws InterruptedException, TimeoutException {
        if (!process.waitFor(max.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new TimeoutException("The child JVM (pid " + pid() + ") did not exit within " + max);
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
}
