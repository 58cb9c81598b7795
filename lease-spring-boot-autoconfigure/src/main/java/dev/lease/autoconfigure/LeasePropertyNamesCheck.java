package dev.lease.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
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
        List<UnknownProperties.Unknown> unknown = names.find(environment);
        if (unknown.isEmpty()) {
            return;
        }
        LeaseConfigurationException failure = failure(unknown);
        if (Binder.get(environment).bind(IGNORE_PROPERTY, Boolean.class).orElse(false)) {
            log.warn(failure.description() + " Ignored, as " + IGNORE_PROPERTY + " is true.");
            return;
        }
        throw failure;
    }

    private static LeaseConfigurationException failure(List<UnknownProperties.Unknown> unknown) {
        String description;
        String rename;
        if (unknown.size() == 1) {
            UnknownProperties.Unknown only = unknown.get(0);
            description = "Unknown property " + describe(only) + ".";
            rename = only.closest() == null ? "remove it"
                    : only.environmentVariable()
                            ? "rename the environment variable to " + only.closestAsEnvironmentVariable() + " (for '"
                                    + only.closest() + "') if that is what it was meant for, or remove it"
                            : "rename it to '" + only.closest() + "' if that is what it was meant for, or remove it";
        }
        else {
            description = "Unknown properties:" + unknown.stream().map(u -> "\n    - " + describe(u))
                    .collect(Collectors.joining());
            rename = "rename each to the known property it was meant for, or remove it";
        }
        return new LeaseConfigurationException(description + " Spring Boot would ignore "
                + (unknown.size() == 1 ? "it" : "them") + " without a word.",
                rename + "; every lease.* property is listed in the starter's configuration metadata, which IDEs "
                        + "complete. If such keys are set outside the application and not meant for the starter (the "
                        + "environment variables of a Kubernetes service named 'lease', a configuration shared with a "
                        + "newer version of the starter), set " + IGNORE_PROPERTY + ": true to log them instead.");
    }

    private static String describe(UnknownProperties.Unknown unknown) {
        return "'" + unknown.name() + "' (" + unknown.origin() + ")"
                + (unknown.closest() == null ? "" : "; the closest known property is '" + unknown.closest() + "'");
    }
}
