"""Object detection evaluation as scripts run it: torchvision's Faster R-CNN (MobileNetV3-Large
FPN backbone at 320 px, random weights) in eval mode under inference_mode on batches of 4 images of
two sizes; its post-processing (score threshold, NMS, top-k per image) makes the shapes of later
work depend on the data, with copies to the host inside each step; the detections of each batch
read back (boxes, scores, labels), as a COCO evaluator collects them."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import torchvision

model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
    weights=None, weights_backbone=None, num_classes=91, box_score_thresh=0.0).cuda().eval()
gen = torch.Generator(device="cuda").manual_seed(7)
sizes = [(480, 640), (640, 480)]
mark_loop_start()
with torch.inference_mode():
    for step in range(STEPS):
        h, w = sizes[step % 2]
        images = [torch.rand(3, h, w, device="cuda", generator=gen) for _ in range(4)]
        detections = model(images)
        step_done(step, *[d[k] for d in detections for k in ("boxes", "scores", "labels")])
