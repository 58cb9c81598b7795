package dev.lease.starter;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * What Maven Central requires of every published module's POM, and that every other module is kept from being
 * published: marked {@code maven.deploy.skip} and left out of the Central bundle (the release profile's
 * {@code excludeArtifacts}), which does not read that property.
 */
class PublishedPomsTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    /** Every published module, those without code included. */
    private static final Set<String> PUBLISHED = published();

    private static final List<String> SHARED = List.of("url", "licenses", "developers", "scm");

    @Test
    void theParentAndTheBomCarryWhatCentralRequires() throws Exception {
        for (String pom : List.of("pom.xml", "lease-bom/pom.xml")) {
            Element project = read(ROOT.resolve(pom));
            for (String element : SHARED) {
                assertThat(child(project, element)).as("<%s> in %s", element, pom).isNotNull();
            }
            assertThat(text(child(child(child(project, "licenses"), "license"), "name"))).as(pom)
                    .isEqualTo("Apache-2.0");
        }
    }

    @Test
    void everyPublishedModuleHasItsOwnNameAndDescription() throws Exception {
        for (String module : PUBLISHED) {
            Element project = read(ROOT.resolve(module).resolve("pom.xml"));
            assertThat(text(child(project, "name"))).as("<name> of %s", module).isNotBlank();
            assertThat(text(child(project, "description"))).as("<description> of %s", module).isNotBlank()
                    .doesNotContainIgnoringCase("not published");
            Element properties = child(project, "properties");
            assertThat(properties == null ? null : child(properties, "maven.deploy.skip")).as(module).isNull();
        }
    }

    @Test
    void everyOtherModuleIsNeverPublished() throws Exception {
        Element parent = read(ROOT.resolve("pom.xml"));
        Set<String> excluded = new TreeSet<>();
        NodeList excludes = parent.getElementsByTagName("excludeArtifact");
        for (int i = 0; i < excludes.getLength(); i++) {
            excluded.add(excludes.item(i).getTextContent().strip());
        }
        List<String> unpublished = new ArrayList<>();
        for (String module : modules()) {
            if (!PUBLISHED.contains(module)) {
                unpublished.add(module);
            }
        }
        assertThat(unpublished).as("modules that are not published").contains("lease-test-servers",
                "lease-fault-tests", "samples", "samples/quickstart", "benchmarks");
        for (String module : unpublished) {
            Element project = read(ROOT.resolve(module).resolve("pom.xml"));
            assertThat(excluded).as("the release profile's excludeArtifacts leaves %s out of the Central bundle", module)
                    .contains(text(child(project, "artifactId")));
            assertThat(deploySkip(module)).as("%s is marked maven.deploy.skip (itself or its parent)", module)
                    .isTrue();
        }
    }

    private static boolean deploySkip(String module) throws Exception {
        for (Path dir = ROOT.resolve(module); dir.startsWith(ROOT) && !dir.equals(ROOT); dir = dir.getParent()) {
            Element properties = child(read(dir.resolve("pom.xml")), "properties");
            if (properties != null && "true".equals(text(child(properties, "maven.deploy.skip")))) {
                return true;
            }
        }
        return false;
    }

    /** Every module of the build (the benchmarks' profile included), as paths from the root. */
    private static List<String> modules() throws Exception {
        List<String> modules = new ArrayList<>();
        collect("", modules);
        return modules;
    }

    private static void collect(String prefix, List<String> into) throws Exception {
        NodeList names = read(ROOT.resolve(prefix).resolve("pom.xml")).getElementsByTagName("module");
        for (int i = 0; i < names.getLength(); i++) {
            String module = prefix + names.item(i).getTextContent().strip();
            if (!into.contains(module)) {
                into.add(module);
                if (Files.exists(ROOT.resolve(module).resolve("pom.xml"))) {
                    collect(module + "/", into);
                }
            }
        }
    }

    private static Set<String> published() {
        Set<String> published = new TreeSet<>(PublicApiTest.PUBLISHED);
        published.addAll(List.of("lease-bom", "lease-spring-boot-starter"));
        return published;
    }

    private static Element read(Path pom) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile()).getDocumentElement();
    }

    /** The first child element with that name, or null. */
    private static Element child(Element parent, String name) {
        for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element element && element.getTagName().equals(name)) {
                return element;
            }
        }
        return null;
    }

    private static String text(Element element) {
        return element == null ? null : element.getTextContent().strip();
    }
}
