package dev.lease.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.lease.LeaseConfigurationException;

/**
 * Shows a lease configuration mistake in Spring Boot's startup failure report, with its fix as the "Action". The
 * report already heads the fix "Action:", so the exception's own "Fix:" prefix is left out.
 */
class LeaseConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<LeaseConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, LeaseConfigurationException cause) {
        String action = cause.action();
        return new FailureAnalysis(cause.description(),
                action.isEmpty() ? action : Character.toUpperCase(action.charAt(0)) + action.substring(1), cause);
    }
}
