"""The publish gate's settings: the plugin's typed configuration in mkdocs.yml, switched by environment variables.

    plugins:
      - tfv:
          publish: !ENV [TFV_PUBLISH, false]        # `make site`: refuse unverified pages, run the HTML census
          commit: !ENV [TFV_COMMIT, ""]             # CI: every report must come from this commit
          require_gpu_report: !ENV [TFV_REQUIRE_GPU_REPORT, false]  # the workflow's build job, after a GPU run
"""

from mkdocs.config import base
from mkdocs.config import config_options as c


class GateConfig(base.Config):
    publish = c.Type(bool, default=False)
    commit = c.Type(str, default="")
    require_gpu_report = c.Type(bool, default=False)


def settings(config):
    """This build's gate settings, from the plugin's configuration."""
    settings = config.plugins["tfv"].config
    return {"publish": settings.publish, "commit": settings.commit or None, "gpu_report": settings.require_gpu_report}
