package dev.lease.autoconfigure;

import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.scheduling.support.TaskUtils;
import org.springframework.util.ErrorHandler;

import dev.lease.LeaseUnavailableException;
import dev.lease.core.LeaseDescription;
import dev.lease.core.LeaseEngineListener;

/**
 * The error handler of Spring Boot's task scheduler: a scheduled run that could not take its lease because the store
 * could not be reached (a {@link LeaseUnavailableException} with a cause) is a skipped tick, said in one WARN per
 * outage of that lease rather than one stack trace per tick; once a grant of that lease succeeds again, one INFO says
 * so. The exception is still thrown to the caller, as {@code whenBusy = THROW} or {@code SKIP} had it; only what the
 * scheduler logs changes. Every other error goes to Spring's default handler for repeating tasks.
 */
final class StoreOutageErrorHandler implements ErrorHandler, LeaseEngineListener {

    private static final Log log = LogFactory.getLog(StoreOutageErrorHandler.class);

    private final ErrorHandler otherwise = TaskUtils.getDefaultErrorHandler(true);
    private final Set<String> outages = ConcurrentHashMap.newKeySet();

    @Override
    public void handleError(Throwable error) {
        LeaseUnavailableException unreachable = storeUnreachable(error);
        if (unreachable == null) {
            otherwise.handleError(error);
        }
        else if (outages.add(unreachable.lease())) {
            log.warn(unreachable.getMessage() + ". The scheduled run was skipped; later runs that cannot reach the "
                    + "store are skipped at DEBUG until a grant of this lease succeeds again.");
        }
        else if (log.isDebugEnabled()) {
            log.debug("Scheduled run skipped, the store is still unreachable: " + unreachable.getMessage());
        }
    }

    @Override
    public Acquisition acquiring(LeaseDescription lease) {
        if (outages.isEmpty()) {
            return Acquisition.IGNORED;
        }
        return new Acquisition() {
            @Override
            public Runnable granted(OptionalLong token) {
                if (outages.remove(lease.name())) {
                    log.info("Lease '" + lease.name() + "' granted again on " + lease.backend() + ": its store is "
                            + "reachable after the outage reported earlier.");
                }
                return () -> { };
            }

            @Override
            public void busy() {
            }

            @Override
            public void failed(Throwable error) {
            }
        };
    }

    private static @Nullable LeaseUnavailableException storeUnreachable(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof LeaseUnavailableException unavailable) {
                return unavailable.getCause() != null && !(unavailable.getCause() instanceof InterruptedException)
                        ? unavailable : null;
            }
        }
        return null;
    }
}
