package dev.lease.faults.harness;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/** POSIX signals to other processes, for pausing ({@code STOP}) and resuming ({@code CONT}) them for real. */
public final class Signals {

    private Signals() {
    }

    public static void send(long pid, String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true).start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IOException("kill -" + signal + " " + pid + " failed: "
                    + new String(kill.getInputStream().readAllBytes()));
        }
    }
}
