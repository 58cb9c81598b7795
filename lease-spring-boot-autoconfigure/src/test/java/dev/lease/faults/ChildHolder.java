package dev.lease.faults;

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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.lease.faults.History.Kind;
import dev.lease.faults.History.Outcome;
import dev.lease.testing.TestTiming;

/**
 * The parent's handle on a {@link HolderMain} child JVM: starts it with this JVM's java binary and the test
 * classpath, records its event lines into the {@link History}, pauses and resumes it with {@code kill -STOP} /
 * {@code -CONT}, and stops it. Its other output goes to {@code target/fault-logs/<name>.log}.
 */
final class ChildHolder implements AutoCloseable {

    private final String name;
    private final Process process;
    private final PrintWriter stdin;
    private final History history;
    private final int worker;
    private final CountDownLatch ready = new CountDownLatch(1);
    private final CountDownLatch bye = new CountDownLatch(1);
    private final BlockingQueue<Long> clocks = new LinkedBlockingQueue<>();
    private final CountDownLatch writeReady = new CountDownLatch(1);
    private volatile long writeReadyToken = -1;
    private volatile Boolean interruptedBeforeWrite;
    private volatile boolean holding;
    private volatile boolean paused;

    private ChildHolder(String name, Process process, History history, int worker) {
        this.name = name;
        this.process = process;
        this.stdin = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        this.history = history;
        this.worker = worker;
    }

    /**
     * Starts a child holder and waits until its engine runs.
     *
     * @param args {@link HolderMain}'s arguments; {@code worker} is added
     * @param env extra environment (faketime)
     */
    static ChildHolder start(String name, int worker, History history, Map<String, String> args,
            Map<String, String> env) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(javaBinary(), "-Xmx128m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-cp", testClasspath(), HolderMain.class.getName(), "worker=" + worker));
        args.forEach((k, v) -> command.add(k + "=" + v));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(env);
        ChildHolder child = new ChildHolder(name, builder.start(), history, worker);
        Thread reader = new Thread(child::readLoop, "child-holder-" + name);
        reader.setDaemon(true);
        reader.start();
        if (!child.ready.await(TestTiming.seconds(60).toMillis(), TimeUnit.MILLISECONDS)) {
            child.process.destroyForcibly();
            throw new IllegalStateException("child holder " + name + " did not start; see " + child.logFile());
        }
        return child;
    }

    /**
     * The classpath of the test JVM. Surefire's default manifest-only jar leaves {@code java.class.path} pointing at a
     * booter jar; it publishes the real test classpath (test classes included) as {@code surefire.test.class.path}.
     */
    static String testClasspath() {
        String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }

    private static String javaBinary() {
        return ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    long pid() {
        return process.pid();
    }

    int worker() {
        return worker;
    }

    /** Whether the child is between a granted lease and the end of its work, as far as its last lines tell. */
    boolean holding() {
        return holding;
    }

    void pause() throws IOException, InterruptedException {
        Signals.send(pid(), "STOP");
        paused = true;
    }

    void resume() throws IOException, InterruptedException {
        Signals.send(pid(), "CONT");
        paused = false;
    }

    /**
     * Waits until a child started with {@code pause-before-write=true} holds the lease and stands right before its
     * first write, and returns the token that write will carry (at once when it is already there).
     */
    long awaitWriteReady() throws InterruptedException {
        if (!writeReady.await(TestTiming.seconds(30).toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("child holder " + name + " never got to its first write; see " + logFile());
        }
        return writeReadyToken;
    }

    /** Lets the child's frozen first write go ahead (it does not look at whether it lost the lease meanwhile). */
    void go() {
        stdin.println("go");
    }

    /** Whether the child's engine had interrupted it while its first write was frozen; {@code null} before {@code go}. */
    Boolean interruptedBeforeWrite() {
        return interruptedBeforeWrite;
    }

    /** The child's {@code System.currentTimeMillis()} minus ours, measured now. */
    long wallClockOffsetMillis() throws InterruptedException {
        clocks.clear();
        long before = System.currentTimeMillis();
        stdin.println("clock");
        Long theirs = clocks.poll(TestTiming.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        if (theirs == null) {
            throw new IllegalStateException("child holder " + name + " did not tell its clock");
        }
        return theirs - (before + System.currentTimeMillis()) / 2;
    }

    /** Lets the child finish its cycle and exit; kills it when it does not within the bound. */
    @Override
    public void close() throws IOException, InterruptedException {
        if (paused) {
            resume();
        }
        stdin.println("stop");
        if (!bye.await(TestTiming.seconds(30).toMillis(), TimeUnit.MILLISECONDS)
                || !process.waitFor(TestTiming.seconds(10).toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
        }
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
                    if (line.startsWith(HolderMain.PREFIX)) {
                        event(line.substring(HolderMain.PREFIX.length()).split(" ", 7));
                    }
                }
            }
        }
        catch (IOException | RuntimeException ex) {
            // The child died or its output is garbled: what was recorded so far stays in the history.
        }
        finally {
            ready.countDown();
            bye.countDown();
        }
    }

    private void event(String[] f) {
        switch (f[0]) {
            case "READY" -> ready.countDown();
            case "BYE" -> bye.countDown();
            case "CLK" -> clocks.add(Long.parseLong(f[1]));
            case "WRITE_READY" -> {
                writeReadyToken = Long.parseLong(f[1]);
                writeReady.countDown();
            }
            case "WRITE_GO" -> interruptedBeforeWrite = Boolean.parseBoolean(f[1]);
            case "INT" -> {
                holding = false;
                history.interrupted(worker, Long.parseLong(f[1]));
            }
            case "INV" -> {
                Kind kind = Kind.valueOf(f[2]);
                if (kind != Kind.WRITE) {
                    holding = false;
                }
                history.invoke(Long.parseLong(f[1]), worker, kind, Long.parseLong(f[3]));
            }
            case "END" -> {
                Kind kind = Kind.valueOf(f[2]);
                Outcome outcome = Outcome.valueOf(f[3]);
                if (kind == Kind.ACQUIRE && outcome == Outcome.OK) {
                    holding = true;
                }
                history.complete(Long.parseLong(f[1]), outcome, Long.parseLong(f[4]), Long.parseLong(f[5]),
                        f.length > 6 ? f[6] : "");
            }
            default -> {
                // Not ours.
            }
        }
    }
}
