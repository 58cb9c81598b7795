package dev.lease.autoconfigure;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.springframework.beans.factory.DisposableBean;

/**
 * The thread that runs the callbacks of the Curator client this auto-configuration builds ({@code runSafeService}).
 * Curator keeps its own default executor for the life of the JVM and never shuts it down on close, so every closed
 * context would leave a thread behind; this one is shut down with the client, which depends on it.
 */
final class CuratorNotifications implements DisposableBean {

    static final String THREAD_NAME = "lease-curator-notify";

    private final ExecutorService executor = Executors.newSingleThreadExecutor(task -> {
        Thread thread = new Thread(task, THREAD_NAME);
        thread.setDaemon(true);
        return thread;
    });

    ExecutorService executor() {
        return executor;
    }

    @Override
    public void destroy() {
        executor.shutdownNow();
    }
}
