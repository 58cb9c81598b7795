package dev.lease.faults.harness;

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

import dev.lease.faults.checker.History.Kind;
import dev.lease.faults.checker.History.Outcome;
import dev.lease.faults.checker.History;
import dev.lease.faults.workload.HolderMain;
import dev.lease.testing.TestTiming;

/**
 * The parent's handle on a {@link HolderMain} child JVM: starts it with this JVM's java binary and the test
 * classpath, records its event lines into the {@link History}, pauses and resumes it with {@code kill -STOP} /
 * {@code -CONT}, and stops it. Its other output goes to {@code target/fault-logs/<name>.log}.
 */
public final class ChildHolder implements AutoCloseable {

    private final String name;
    private final Process process;
    private final PrintWriter stdin;
    private final History history;
    private final int worker;
    private final Events events;
    private final Map<String, String> args;
    private final Map<String, String> env;
    private Thread reader;
    private volatile boolean paused;
    private volatile boolean killed;

    private ChildHolder(String name, Process process, History history, int worker, Map<String, String> args,
            Map<String, String> env) {
        this.name = name;
        this.args = Map.copyOf(args);
        this.env = Map.copyOf(env);
        this.process = process;
        this.stdin = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        this.history = history;
        this.worker = worker;
        this.events = new Events(name, worker, history);
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
        ChildHolder child = new ChildHolder(name, builder.start(), history, worker, args, env);
        child.reader = new Thread(child::readLoop, "child-holder-" + name);
        child.reader.setDaemon(true);
        child.reader.start();
        if (!child.events.ready.await(TestTiming.seconds(60).toMillis(), TimeUnit.MILLISECONDS)) {
            child.process.destroyForcibly();
            throw new IllegalStateException("child holder " + name + " did not start; see " + child.logFile());
        }
        return child;
    }

    /**
     * The classpath of the test JVM. Surefire's default manifest-only jar leaves {@code java.class.path} pointing at a
     * booter jar; it publishes the real test classpath (test classes included) as {@code surefire.test.class.path}.
     * Public for child JVMs other than {@link HolderMain} (the Kafka scenarios' publishing holder).
     */
    public static String testClasspath() {
        String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }

    /** This JVM's java binary, for child JVMs. */
    public static String javaBinary() {
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
        return events.holding;
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
    public long awaitWriteReady() throws InterruptedException {
        if (!events.writeReady.await(TestTiming.seconds(30).toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("child holder " + name + " never got to its first write; see " + logFile());
        }
        return events.writeReadyToken;
    }

    /** Freezes the child's next write again, as its first was ({@code pause-before-write}). */
    void armWrite() {
        stdin.println("arm");
    }

    /**
     * Waits until the child stands before a frozen write it has not been waited for yet (its first, or the one after
     * {@link #armWrite()}), and returns the token that write will carry.
     */
    long nextWriteReady() throws InterruptedException {
        Long token = events.writeReadies.poll(TestTiming.seconds(30).toMillis(), TimeUnit.MILLISECONDS);
        if (token == null) {
            throw new IllegalStateException("child holder " + name + " never got to its frozen write; see "
                    + logFile());
        }
        return token;
    }

    /**
     * Kills the child at once ({@code SIGKILL}): no release, no goodbye to the lease store, which keeps its grant until
     * the grant expires there. Its events are read to the end, then the history is told ({@link History#killed}).
     */
    public void kill() throws IOException, InterruptedException {
        killed = true;
        events.killed = true;
        long at = System.nanoTime();
        // Not resumed first when paused: SIGKILL ends a stopped process too, and a resumed one could still write.
        process.destroyForcibly();
        if (!process.waitFor(TestTiming.seconds(30).toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("child holder " + name + " survived SIGKILL");
        }
        reader.join(TestTiming.seconds(10).toMillis());
        history.killed(worker, at);
    }

    /**
     * A new JVM with the killed child's arguments and environment (its backend, lease, ttl and links), known to the
     * history as worker {@code worker}: each life of the instance is a holder of its own to the checker, so that a
     * grant the two shared shows as one token granted twice. The harness's hook {@code pause-before-write} is not
     * carried over: nobody would let the new life's first write go.
     */
    public ChildHolder restart(String restartName, int worker) throws IOException, InterruptedException {
        Map<String, String> same = new java.util.HashMap<>(args);
        same.remove("pause-before-write");
        return start(restartName, worker, history, same, env);
    }

    /** Lets the child's frozen first write go ahead (it does not look at whether it lost the lease meanwhile). */
    void go() {
        stdin.println("go");
    }

    /** Whether the child's engine had interrupted it while its first write was frozen; {@code null} before {@code go}. */
    Boolean interruptedBeforeWrite() {
        return events.interruptedBeforeWrite;
    }

    /** The child's {@code System.currentTimeMillis()} minus ours, measured now. */
    long wallClockOffsetMillis() throws InterruptedException {
        events.clocks.clear();
        long before = System.currentTimeMillis();
        stdin.println("clock");
        Long theirs = events.clocks.poll(TestTiming.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        if (theirs == null) {
            throw new IllegalStateException("child holder " + name + " did not tell its clock");
        }
        return theirs - (before + System.currentTimeMillis()) / 2;
    }

    /**
     * Lets the child finish its cycle and exit; kills it when it does not within the bound. A child that had to be
     * killed, or exited with an error, is a problem of the run: its last ops may never have been reported.
     */
    @Override
    public void close() throws IOException, InterruptedException {
        if (killed) {
            return;
        }
        if (paused) {
            resume();
        }
        stdin.println("stop");
        if (!events.bye.await(TestTiming.seconds(30).toMillis(), TimeUnit.MILLISECONDS)
                || !process.waitFor(TestTiming.seconds(10).toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            history.problem("child holder " + name + " did not exit within the bound after stop and was killed; see "
                    + logFile());
        }
        else if (process.exitValue() != 0) {
            history.problem("child holder " + name + " exited with " + process.exitValue() + "; see " + logFile());
        }
        // Its last lines must be in the history before the history is checked.
        reader.join(TestTiming.seconds(10).toMillis());
        if (reader.isAlive()) {
            history.problem("the event stream of child holder " + name + " was still open after it exited");
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
                events.read(in, log);
            }
        }
        catch (IOException ex) {
            history.problem("the output of child holder " + name + " could not be logged: " + ex);
        }
        finally {
            events.ended();
        }
    }

    /**
     * Turns a child's output into the history. One bad line must not end the reading: the child's later grants and
     * writes would then be missing, and a duplicate token or a stale write among them would pass the check. So a
     * line that is ours but cannot be read, and a stream that ends before the child said {@code BYE}, are recorded
     * as problems of the run, and reading goes on.
     */
    static final class Events {

        final CountDownLatch ready = new CountDownLatch(1);
        final CountDownLatch bye = new CountDownLatch(1);
        final BlockingQueue<Long> clocks = new LinkedBlockingQueue<>();
        final CountDownLatch writeReady = new CountDownLatch(1);
        /** The token of every frozen write so far, in order; {@link #writeReady} only tells of the first. */
        final BlockingQueue<Long> writeReadies = new LinkedBlockingQueue<>();
        volatile long writeReadyToken = -1;
        volatile Boolean interruptedBeforeWrite;
        volatile boolean holding;
        private final String child;
        private final int worker;
        private final History history;
        private volatile boolean said;
        /** Killed on purpose: its stream ends without BYE. */
        volatile boolean killed;

        Events(String child, int worker, History history) {
            this.child = child;
            this.worker = worker;
            this.history = history;
        }

        /** Reads {@code in} to its end, copying every line to {@code log}; see {@link #ended()}. */
        void read(BufferedReader in, Writer log) throws IOException {
            String line;
            while (true) {
                try {
                    line = in.readLine();
                }
                catch (IOException ex) {
                    history.problem("the event stream of child holder " + child + " broke: " + ex);
                    return;
                }
                if (line == null) {
                    return;
                }
                log.write(line);
                log.write('\n');
                line(line);
            }
        }

        void line(String line) {
            int at = line.indexOf(HolderMain.PREFIX);
            if (at < 0) {
                return; // logging
            }
            if (at > 0) {
                // Other output (stderr shares the pipe) without its line end: the event is still read, so that
                // what follows stays consistent, but the stream was not what the child meant to send.
                history.problem("child holder " + child + " sent an event glued to other output: '" + line + "'");
            }
            try {
                event(line.substring(at + HolderMain.PREFIX.length()).split(" ", 7));
            }
            catch (RuntimeException ex) {
                history.problem("child holder " + child + " sent a malformed event line '" + line + "': " + ex);
            }
        }

        /** The stream ended: a problem unless the child said {@code BYE} first. Releases whoever waits on it. */
        void ended() {
            if (!said && !killed) {
                history.problem("the event stream of child holder " + child + " ended before its BYE: the events it"
                        + " did not send are missing from the history");
            }
            ready.countDown();
            bye.countDown();
        }

        private void event(String[] f) {
            switch (f[0]) {
                case "READY" -> ready.countDown();
                case "BYE" -> {
                    said = true;
                    bye.countDown();
                }
                case "CLK" -> clocks.add(Long.parseLong(f[1]));
                case "WRITE_READY" -> {
                    writeReadyToken = Long.parseLong(f[1]);
                    writeReadies.add(writeReadyToken);
                    writeReady.countDown();
                }
                case "WRITE_GO" -> interruptedBeforeWrite = Boolean.parseBoolean(f[1]);
                case "INT" -> {
                    // INT <at> [<token>]: the token names the section interrupted.
                    long at = Long.parseLong(f[1]);
                    holding = false;
                    history.interrupted(worker, f.length > 2 ? Long.parseLong(f[2]) : History.UNKNOWN_TOKEN, at);
                }
                case "FORCED" -> history.forced(Long.parseLong(f[1]));
                // PROBLEM <text>: what the child's worker saw go wrong (split in at most 7 fields: joined back).
                case "PROBLEM" -> history.problem("child holder " + child + " (worker " + worker + "): "
                        + String.join(" ", java.util.Arrays.asList(f).subList(1, f.length)));
                case "INV" -> {
                    Kind kind = Kind.valueOf(f[2]);
                    long id = Long.parseLong(f[1]);
                    long at = Long.parseLong(f[3]);
                    if (kind != Kind.WRITE) {
                        holding = false;
                    }
                    history.invoke(id, worker, kind, at);
                }
                case "END" -> {
                    long id = Long.parseLong(f[1]);
                    Kind kind = Kind.valueOf(f[2]);
                    Outcome outcome = Outcome.valueOf(f[3]);
                    long token = Long.parseLong(f[4]);
                    long at = Long.parseLong(f[5]);
                    if (kind == Kind.ACQUIRE && outcome == Outcome.OK) {
                        holding = true;
                    }
                    history.complete(id, outcome, token, at, f.length > 6 ? f[6] : "");
                }
                default -> throw new IllegalArgumentException("unknown event " + f[0]);
            }
        }
    }
}
