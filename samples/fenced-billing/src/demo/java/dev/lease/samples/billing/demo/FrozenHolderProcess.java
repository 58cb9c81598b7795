package dev.lease.samples.billing.demo;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;

import dev.lease.testing.StoppableJvm;

/**
 * The parent's handle on a {@link FrozenHolder} child JVM (lease-test's {@link StoppableJvm}): its protocol lines,
 * and stopping and resuming it with {@code kill -STOP} / {@code kill -CONT}.
 */
final class FrozenHolderProcess implements AutoCloseable {

    private static final Pattern PROTOCOL = Pattern.compile("(READY|ACCEPTED|REJECTED|FAILED)\\b.*");

    private final StoppableJvm jvm;

    private FrozenHolderProcess(StoppableJvm jvm) {
        this.jvm = jvm;
    }

    /** Whether this OS can stop and resume a process with {@code kill}. */
    static boolean supported() {
        return StoppableJvm.supported();
    }

    /** Starts a child JVM running {@link FrozenHolder} with these application arguments. */
    static FrozenHolderProcess start(List<String> applicationArgs, Path log) throws IOException {
        return new FrozenHolderProcess(StoppableJvm.start(FrozenHolder.class, applicationArgs, log, PROTOCOL));
    }

    long pid() {
        return jvm.pid();
    }

    /** The next protocol line, such as {@code READY token=3}. */
    String next(Duration max, String what) throws InterruptedException, TimeoutException {
        return jvm.next(max, what);
    }

    /** Freezes the whole JVM: every thread, ZooKeeper heartbeats included. */
    void stop() throws IOException, InterruptedException {
        jvm.stop();
    }

    /** Tells it to write, then lets it run again; the command waits in the pipe while it is stopped. */
    void resumeAndWrite() throws IOException, InterruptedException {
        jvm.send("WRITE");
        jvm.resume();
    }

    int awaitExit(Duration max) throws InterruptedException, TimeoutException {
        return jvm.awaitExit(max);
    }

    /** Kills the child if it is still there (SIGKILL works on a stopped process too). */
    @Override
    public void close() {
        jvm.close();
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
