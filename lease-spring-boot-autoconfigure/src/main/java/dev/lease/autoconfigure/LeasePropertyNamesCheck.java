package dev.lease.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.Ordered;
import org.springframework.core.PriorityOrdered;
import org.springframework.core.env.Environment;

import dev.lease.LeaseConfigurationException;

/**
 * Fails the startup on a {@code lease.*} key that the starter does not know, naming it and the known key it most
 * resembles. Without it a misspelt key is silently ignored and the mistake shows up far from its cause: a backend
 * picked implicitly, or "add curator-framework" for a misspelt {@code connect-string}.
 *
 * <p>Only the application's own configuration can fail the startup. System properties and environment variables also
 * carry what the surroundings set for every process: Maven passes its {@code -D} options on to every test JVM, and
 * Kubernetes gives every pod of a namespace {@code LEASE_PORT}, {@code LEASE_SERVICE_HOST}... for a service named
 * {@code lease}, which Spring Boot reads as {@code lease.port}. Unknown keys there are logged, once, with the same
 * advice.
 *
 * <p>A bean factory post-processor, so that it runs once every configuration class and its property sources are
 * known, and before any bean is created: before any backend connects or fails.
 */
final class LeasePropertyNamesCheck implements BeanFactoryPostProcessor, EnvironmentAware, PriorityOrdered {

    static final String PREFIX = "lease";

    static final String IGNORE_PROPERTY = "lease.ignore-unknown-properties";

    private static final Log log = LogFactory.getLog(LeasePropertyNamesCheck.class);

    private Environment environment;

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
        UnknownProperties names;
        try {
            names = UnknownProperties.fromClasspath(PREFIX, beanFactory.getBeanClassLoader());
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not read the configuration metadata of the lease starter", ex);
        }
        if (!names.knowsAnyProperty()) {
            log.warn("No configuration metadata declares lease.* properties (" + UnknownProperties.METADATA
                    + "), so misspelt lease.* keys cannot be detected.");
            return;
        }
        Map<Boolean, List<UnknownProperties.Unknown>> byOwner = names.find(environment).stream()
                .collect(Collectors.partitioningBy(unknown -> unknown.source().applicationOwned()));
        List<UnknownProperties.Unknown> outside = byOwner.get(false);
        if (!outside.isEmpty()) {
            log.warn(description(outside) + " Only logged: system properties and environment variables are not the "
                    + "application's own configuration, and may carry lease.* keys meant for something else. If "
                    + (outside.size() == 1 ? "it was" : "they were") + " meant for the lease starter: "
                    + advice(outside) + ".");
        }
        List<UnknownProperties.Unknown> own = byOwner.get(true);
        if (own.isEmpty()) {
            return;
        }
        LeaseConfigurationException failure = new LeaseConfigurationException(description(own), advice(own)
                + ". If such keys are not meant for the starter (a configuration shared with a newer version of the "
                + "starter), set " + IGNORE_PROPERTY + ": true to log them instead.");
        if (Binder.get(environment).bind(IGNORE_PROPERTY, Boolean.class).orElse(false)) {
            log.warn(failure.description() + " Ignored, as " + IGNORE_PROPERTY + " is true.");
            return;
        }
        throw failure;
    }

    private static String description(List<UnknownProperties.Unknown> unknown) {
        String names = unknown.size() == 1 ? "Unknown property " + describe(unknown.get(0)) + "."
                : "Unknown properties:" + unknown.stream().map(u -> "\n    - " + describe(u)).collect(Collectors.joining());
        return names + " Spring Boot would ignore " + (unknown.size() == 1 ? "it" : "them") + " without a word.";
    }

    /** The known key each was probably meant to be, in the spelling of where it is set. */
    private static String advice(List<UnknownProperties.Unknown> unknown) {
        String rename;
        if (unknown.size() == 1) {
            UnknownProperties.Unknown only = unknown.get(0);
            rename = only.closest() == null ? "remove it"
                    : only.environmentVariable()
                            ? "rename the environment variable to " + only.closestAsEnvironmentVariable() + " (for '"
                                    + only.closest() + "') if that is what it was meant for, or remove it"
                            : "rename it to '" + only.closest() + "' if that is what it was meant for, or remove it";
        }
        else {
            rename = "rename each to the known property it was meant for, or remove it";
        }
        return rename + "; every lease.* property is listed in the starter's configuration metadata, which IDEs "
                + "complete";
    }

    private static String describe(UnknownProperties.Unknown unknown) {
        return "'" + unknown.name() + "' (" + unknown.origin() + ")"
                + (unknown.closest() == null ? "" : "; the closest known property is '" + unknown.closest() + "'");
    }
}
