package dev.lease.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.lease.LeaseConfigurationException;

/** Shows a lease configuration mistake in Spring Boot's startup failure report, with its fix as the "Action". */
class LeaseConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<LeaseConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, LeaseConfigurationException cause) {
        return new FailureAnalysis(cause.description(), "Fix: " + cause.action(), cause);
    }
}
