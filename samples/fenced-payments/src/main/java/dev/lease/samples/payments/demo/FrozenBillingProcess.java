package dev.lease.samples.payments.demo;

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
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The parent's handle on a {@link FrozenBilling} JVM: started with this JVM's java and class path, its protocol
 * lines read (the rest goes to a log file), stopped and resumed with {@code kill -STOP} / {@code kill -CONT}.
 */
final class FrozenBillingProcess implements AutoCloseable {

    private final Process process;
    private final PrintWriter stdin;
    private final BlockingQueue<String> protocol = new LinkedBlockingQueue<>();

    private FrozenBillingProcess(Process process, Writer log) {
        this.process = process;
        this.stdin = new PrintWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), true);
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)); log) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    log.write(line + System.lineSeparator());
                    log.flush();
                    if (line.matches("(READY|PAID|REFUSED|FAILED)\\b.*")) {
                        protocol.add(line);
                    }
                }
            }
            catch (IOException ex) {
                protocol.add("FAILED reading the child's output: " + ex);
            }
        }, "frozen-billing-output");
        reader.setDaemon(true);
        reader.start();
    }

    static FrozenBillingProcess start(List<String> args, Path log) throws IOException {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), FrozenBilling.class.getName()));
        command.addAll(args);
        Files.createDirectories(log.toAbsolutePath().getParent());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        return new FrozenBillingProcess(process, Files.newBufferedWriter(log, StandardCharsets.UTF_8));
    }

    String next(Duration max, String what) throws InterruptedException, TimeoutException {
        String line = protocol.poll(max.toMillis(), TimeUnit.MILLISECONDS);
        if (line == null) {
            throw new TimeoutException("The frozen billing JVM (pid " + process.pid() + ") did not say " + what
                    + " within " + max);
        }
        return line;
    }

    void freeze() throws IOException, InterruptedException {
        kill("-STOP");
    }

    /** The command waits in the pipe while the JVM is stopped; it reads it as soon as it runs again. */
    void resumeAndPay() throws IOException, InterruptedException {
        stdin.println("PAY");
        kill("-CONT");
    }

    int awaitExit(Duration max) throws InterruptedException, TimeoutException {
        if (!process.waitFor(max.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new TimeoutException("The frozen billing JVM (pid " + process.pid() + ") did not exit within " + max);
        }
        return process.exitValue();
    }

    private void kill(String signal) throws IOException, InterruptedException {
        int exit = new ProcessBuilder("kill", signal, String.valueOf(process.pid())).inheritIO().start().waitFor();
        if (exit != 0) {
            throw new IOException("kill " + signal + " " + process.pid() + " exited with " + exit);
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
        stdin.close();
    }
}
