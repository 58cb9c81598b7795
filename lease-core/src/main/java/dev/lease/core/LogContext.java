package dev.lease.core;

import org.slf4j.MDC;

/**
 * Keeps the logging context of a thread in step with its innermost leased section: {@code lease.name} and
 * {@code lease.token} (absent on backends without tokens) in SLF4J's MDC, so that every log line a term writes can
 * be traced to its grant. Set by the thread itself as it enters and leaves sections ({@link ThreadLeases}); an
 * application without SLF4J gets nothing and pays a field read.
 */
final class LogContext {

    /** The MDC key of the innermost lease's name, as evaluated. */
    static final String NAME = "lease.name";
    /** The MDC key of the innermost lease's fencing token. */
    static final String TOKEN = "lease.token";

    /** SLF4J is an optional dependency: this class touches it only when it is there. */
    private static final boolean PRESENT = present();

    private LogContext() {
    }

    /** The current thread's innermost section is now {@code lease}; null when it has left the last one. */
    static void show(HeldLease lease) {
        if (!PRESENT) {
            return;
        }
        if (lease == null) {
            MDC.remove(NAME);
            MDC.remove(TOKEN);
            return;
        }
        MDC.put(NAME, lease.name());
        if (lease.hasToken()) {
            MDC.put(TOKEN, Long.toString(lease.token().value()));
        }
        else {
            MDC.remove(TOKEN);
        }
    }

    private static boolean present() {
        try {
            Class.forName("org.slf4j.MDC", false, LogContext.class.getClassLoader());
            return true;
        }
        catch (ClassNotFoundException | LinkageError ex) {
            return false;
        }
    }
}
